/**
 * The retry classification (issue 29 item 3), a table rather than `if`s per provider (DESIGN.md
 * "Upstream routing"): what the attempt loop does after a failed attempt.
 *  - `retry`: the same deployment may be tried again (within retry_same_deployment), after a backoff
 *    or the upstream's Retry-After; then the next deployment or fallback.
 *  - `next`: the deployment is not tried again for this request (it timed out); the next one is.
 *  - `key`: the deployment refused the gateway's key (401, 403): the key is taken out, another tried.
 *  - `context_fallback`, `content_fallback`: the offering's `context_window_fallbacks` or
 *    `content_policy_fallbacks` are tried; without them the error is the answer.
 *  - `final`: the error is the answer (another 4xx: the client's request is at fault).
 * Nothing is retried once content reached the client: the loop never sees such a failure.
 */
import { GatewayError } from '../errors.js';
import { AttemptError, type FailureKind } from '../upstream/attempt-error.js';

/** What the loop does after a failed attempt. */
export type Decision = 'retry' | 'next' | 'key' | 'context_fallback' | 'content_fallback' | 'final';

/** Statuses worth another attempt: a timeout, a rate limit, or the upstream's own failure. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504, 529]);

/** Statuses that refuse the gateway's credential, not the request. */
const KEY_STATUSES: ReadonlySet<number> = new Set([401, 403]);

/** Failures without an HTTP status, by kind. */
const BY_KIND: Record<Exclude<FailureKind, 'status'>, Decision> = {
  connect: 'retry',
  stream_before_content: 'retry',
  // No access token (the token endpoint failed): as a connect failure, nothing was sent; another deployment may serve.
  token: 'retry',
  // The token endpoint refused the credential (or the key file is unusable): asking again cannot help; the next deployment may serve.
  token_refused: 'next',
  // A deployment that timed out is not retried: the next one is tried (issue 29 item 3).
  headers_timeout: 'next',
  first_token_timeout: 'next',
  idle_timeout: 'next',
};

/** Client errors that another model may still serve, by the gateway's error code. */
const BY_CODE: Readonly<Record<string, Decision>> = {
  context_length_exceeded: 'context_fallback',
  content_policy_violation: 'content_fallback',
};

/** The decision for an error thrown by an attempt; anything but an AttemptError is final. */
export function classify(error: unknown): Decision {
  if (!(error instanceof AttemptError)) return 'final';
  if (error.failure !== 'status') return BY_KIND[error.failure];
  const byCode = BY_CODE[error.code];
  if (byCode) return byCode;
  const status = error.upstreamStatus ?? 0;
  if (KEY_STATUSES.has(status)) return 'key';
  return RETRYABLE_STATUSES.has(status) ? 'retry' : 'final';
}

/** True when the failure says something about the deployment's health (not the client's own request). */
export function countsAgainstDeployment(decision: Decision): boolean {
  return decision === 'retry' || decision === 'next' || decision === 'key';
}

/** The label of `gateway_upstream_attempts_total{outcome}` for a failed attempt. */
export function outcomeLabel(error: unknown): string {
  if (error instanceof AttemptError) return error.failure === 'status' ? String(error.upstreamStatus ?? 'status') : error.failure;
  return error instanceof GatewayError ? error.code : 'error';
}
