/**
 * An upstream attempt's failure, with what the retry policy needs to classify it (issue 29 item 3):
 * how it failed, the upstream's status and its Retry-After. It is the very GatewayError the client
 * gets when no other attempt follows (same code, message, status and headers), so code that only
 * knows GatewayError handles it as before.
 */
import { GatewayError } from '../errors.js';

/**
 * How an attempt failed: `connect` (refused, reset or unreachable before any answer), `headers_timeout`
 * (no answer within the provider's headers_ms or the request's deadline), `first_token_timeout`,
 * `idle_timeout` (a stream silent too long before its first content), `stream_before_content` (a
 * stream that ended or errored before its first content event), `status` (an HTTP error answer),
 * `token` (the provider's credential could not be exchanged for an access token, for now: nothing was
 * sent), `token_refused` (the token endpoint refused the credential, or the key file is unusable).
 */
export type FailureKind = 'connect' | 'headers_timeout' | 'first_token_timeout' | 'idle_timeout' | 'stream_before_content' | 'token' | 'token_refused' | 'status';

/** A failed upstream attempt, answered as its client-facing error when it is the last. */
export class AttemptError extends GatewayError {
  constructor(
    readonly failure: FailureKind,
    error: GatewayError,
    /** The upstream's HTTP status, when it answered one. */
    readonly upstreamStatus: number | null = null,
    /** How long the upstream asked to wait (Retry-After or retry-after-ms), in ms; null when it did not say. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(error.code, error.message, error.extra);
  }
}

/**
 * The wait an upstream asked for, in ms: `retry-after-ms` (a vendor's own header, in ms), else `Retry-After` in seconds or
 * as an HTTP date; null when absent or unreadable. `now` is injected by tests.
 */
export function retryAfterMs(headers: Readonly<Record<string, string>>, now: number = Date.now()): number | null {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const after = headers['retry-after']?.trim();
  if (after === undefined || after === '') return null;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.ceil(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
