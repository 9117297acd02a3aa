/**
 * Maps an upstream error answer to the gateway's error table, for any translator: the client sees a
 * stable code; only a 4xx request error's own message is shown (it describes the client's request),
 * never the upstream's authentication text, which can echo a credential.
 */
import { GatewayError } from '../errors.js';

/** The upstream's own message from a body of shape `{error:{message}}` or `{message}`, if any. */
export function upstreamMessage(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const error = (body as { error?: unknown }).error;
  const source = error && typeof error === 'object' ? error : body;
  const message = (source as { message?: unknown }).message;
  return typeof message === 'string' ? message.slice(0, 2000) : null;
}

/**
 * Client errors another model may still serve (issue 29 item 4), recognised by the vendor's error
 * code (OpenAI's `error.code`) or, where a format has none (Anthropic's messages), by its message.
 */
const CODED_ERRORS: ReadonlyArray<{ code: 'context_length_exceeded' | 'content_policy_violation'; codes: readonly string[]; message: RegExp }> = [
  { code: 'context_length_exceeded', codes: ['context_length_exceeded', 'string_above_max_length'], message: /prompt is too long|maximum context length|context window/i },
  { code: 'content_policy_violation', codes: ['content_policy_violation', 'content_filter'], message: /content filtering policy|content management policy|safety system/i },
];

/** The code of a 400 that another model may serve, or null. */
function codedError(body: unknown, message: string | null): 'context_length_exceeded' | 'content_policy_violation' | null {
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  for (const entry of CODED_ERRORS) {
    if (typeof code === 'string' && entry.codes.includes(code)) return entry.code;
    if (message !== null && entry.message.test(message)) return entry.code;
  }
  return null;
}

/** The GatewayError for an upstream status; a 429 keeps its retry-after. */
export function mapUpstreamError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  if (status === 429) {
    const retry: Record<string, string> = {};
    if (headers['retry-after']) retry['retry-after'] = headers['retry-after'];
    if (headers['retry-after-ms']) retry['retry-after-ms'] = headers['retry-after-ms'];
    return new GatewayError('upstream_rate_limited', 'The upstream provider is rate limiting requests; retry later.', { headers: retry });
  }
  // The gateway's own credentials or vendor account failed: the client's request is not at fault.
  if (status === 401 || status === 402 || status === 403) {
    return new GatewayError('upstream_error', 'The upstream provider refused the gateway\'s credentials or account.');
  }
  if (status >= 400 && status < 500) {
    const message = upstreamMessage(body) ?? `The upstream provider rejected the request (HTTP ${status}).`;
    const param = (body as { error?: { param?: unknown } } | null)?.error?.param;
    const coded = status === 400 ? codedError(body, upstreamMessage(body)) : null;
    if (coded) return new GatewayError(coded, message, { param: typeof param === 'string' ? param : null });
    // Clients are promised 400 and 413 (spec 7); any other upstream 4xx (404, 409, 422...) is a request error.
    return new GatewayError('invalid_request', message, { param: typeof param === 'string' ? param : null, status: status === 413 ? 413 : 400 });
  }
  return new GatewayError('upstream_error', `The upstream provider failed (HTTP ${status}).`);
}

/**
 * Azure.Core errors, the shape every Azure AI service answers (`{error: {code, message, innererror:
 * {code, message}}}`): the inner message says what was wrong.
 */
export function azureCoreError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  const error = (body as { error?: { message?: unknown; innererror?: { message?: unknown } } } | null)?.error;
  const inner = error?.innererror?.message;
  return mapUpstreamError(status, typeof inner === 'string' ? { error: { message: inner } } : body, headers);
}
