/**
 * The one error table (spec section 7). Every client-facing error has a stable snake_case code, an
 * HTTP status, an error type for the client format's body, and whether its message is safe to show.
 * Formats render a GatewayError into their own body shape (src/formats/<id>/errors.ts).
 */

/** Error type families, mapped by each format to its own vocabulary. */
export type ErrorKind =
  | 'invalid_request' | 'authentication' | 'payment' | 'not_found' | 'rate_limit'
  | 'upstream' | 'timeout' | 'internal' | 'too_large' | 'unavailable' | 'conflict' | 'permission';

interface ErrorSpec { status: number; kind: ErrorKind; }

/** Stable codes; a code never changes its meaning. */
export const ERROR_TABLE = {
  invalid_request: { status: 400, kind: 'invalid_request' },
  invalid_json: { status: 400, kind: 'invalid_request' },
  unsupported_parameter: { status: 400, kind: 'invalid_request' },
  model_not_found: { status: 400, kind: 'invalid_request' },
  model_not_available: { status: 400, kind: 'invalid_request' },
  unsupported_responses_tools: { status: 400, kind: 'invalid_request' },
  tool_not_available: { status: 400, kind: 'invalid_request' },
  file_token_count_unsupported: { status: 400, kind: 'invalid_request' },
  // A vendor refused the prompt or its output on content grounds (an image job moderated): the client's to change, not charged.
  content_policy_violation: { status: 400, kind: 'invalid_request' },
  // The prompt is longer than the model's context window (the vendor said so): another model may serve it (issue 29 item 4).
  context_length_exceeded: { status: 400, kind: 'invalid_request' },
  invalid_api_key: { status: 401, kind: 'authentication' },
  insufficient_balance: { status: 402, kind: 'payment' },
  // Per-key controls (issue 33 item 2): the key's own budget for its period is spent (the balance is untouched),
  // or the key may not use the requested model.
  key_budget_exceeded: { status: 402, kind: 'payment' },
  model_not_allowed: { status: 403, kind: 'permission' },
  not_found: { status: 404, kind: 'not_found' },
  // Stored responses (issue 31 item 3): OpenAI's code for a previous_response_id it does not hold.
  previous_response_not_found: { status: 400, kind: 'invalid_request' },
  payload_too_large: { status: 413, kind: 'too_large' },
  rate_limited: { status: 429, kind: 'rate_limit' },
  upstream_rate_limited: { status: 429, kind: 'rate_limit' },
  internal_error: { status: 500, kind: 'internal' },
  upstream_error: { status: 502, kind: 'upstream' },
  upstream_unavailable: { status: 503, kind: 'upstream' },
  upstream_timeout: { status: 504, kind: 'timeout' },
  // Files (issue 10; spec 2, 3, 4.5-4.7): an unknown id and another account's id are the same 404.
  file_not_found: { status: 404, kind: 'not_found' },
  file_expired: { status: 404, kind: 'not_found' },
  file_not_finalized: { status: 400, kind: 'invalid_request' },
  file_purpose_mismatch: { status: 400, kind: 'invalid_request' },
  file_verification_failed: { status: 400, kind: 'invalid_request' },
  file_quota_exceeded: { status: 400, kind: 'invalid_request' },
  upload_too_large: { status: 413, kind: 'too_large' },
  // Operation ids and skills executions (spec 4.6, 7: 409 for an operation id already submitted).
  operation_id_required: { status: 400, kind: 'invalid_request' },
  operation_id_reused: { status: 409, kind: 'conflict' },
  operation_in_progress: { status: 409, kind: 'conflict' },
  skill_execution_pending: { status: 409, kind: 'conflict' },
  execution_recovery_required: { status: 409, kind: 'conflict' },
  // The gateway's own dependencies (issue 8): the shared limiter backend or the store is down.
  limiter_unavailable: { status: 503, kind: 'unavailable' },
  store_unavailable: { status: 503, kind: 'unavailable' },
} as const satisfies Record<string, ErrorSpec>;

/** One of the codes in ERROR_TABLE. */
export type ErrorCode = keyof typeof ERROR_TABLE;

/** An error the gateway answers with; `message` must be safe to show (never a secret or a stack). */
export class GatewayError extends Error {
  readonly status: number;
  readonly kind: ErrorKind;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { param?: string | null; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = extra.status ?? ERROR_TABLE[code].status;
    this.kind = ERROR_TABLE[code].kind;
  }
}

/**
 * A dependency of the gateway itself (the store, the limiter backend) cannot be reached. Drivers
 * throw it for connection-class failures only; the pipeline answers it as a 503 with Retry-After.
 */
export class DependencyUnavailableError extends Error {
  constructor(readonly dependency: 'store' | 'limiter', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DependencyUnavailableError';
  }
}

/** Seconds a client is told to wait after a 503 for an unavailable dependency. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 1;

/** The client-facing 503 for an unavailable dependency; nothing was reserved or charged. */
export function dependencyError(dependency: 'store' | 'limiter'): GatewayError {
  const headers = { 'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS) };
  return dependency === 'store'
    ? new GatewayError('store_unavailable', 'The gateway cannot reach its store right now; nothing was charged. Retry shortly.', { headers })
    : new GatewayError('limiter_unavailable', 'The gateway cannot reach its rate-limit backend right now; nothing was charged. Retry shortly.', { headers });
}

/** Wraps anything thrown into a GatewayError; unknown errors become a generic 500 with no detail. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof DependencyUnavailableError) return dependencyError(error.dependency);
  return new GatewayError('internal_error', 'The gateway failed to process the request.');
}
