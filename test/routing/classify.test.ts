/** The retry table (src/routing/classify.ts, issue 29 item 3) and the upstream's wait (src/upstream/attempt-error.ts). */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { classify, outcomeLabel } from '../../src/routing/classify.js';
import { AttemptError, retryAfterMs, type FailureKind } from '../../src/upstream/attempt-error.js';
import { mapUpstreamError } from '../../src/translate/upstream-error.js';

const status = (code: number, body: unknown = null): AttemptError => new AttemptError('status', mapUpstreamError(code, body, {}), code);
const failed = (kind: FailureKind): AttemptError => new AttemptError(kind, new GatewayError('upstream_unavailable', 'x'));

describe('classify', () => {
  it('retries 408, 429, 500, 502, 503, 504 and 529', () => {
    for (const code of [408, 429, 500, 502, 503, 504, 529]) expect(classify(status(code)), String(code)).toBe('retry');
  });

  it('takes the key out on 401 and 403', () => {
    expect(classify(status(401))).toBe('key');
    expect(classify(status(403))).toBe('key');
  });

  it('never retries another 4xx or an unlisted 5xx on the same model', () => {
    for (const code of [400, 404, 409, 413, 422, 501, 505]) expect(classify(status(code)), String(code)).toBe('final');
  });

  it('sends context_length_exceeded and content_policy_violation to their fallbacks (OpenAI codes and Anthropic messages)', () => {
    expect(classify(status(400, { error: { code: 'context_length_exceeded', message: 'too long' } }))).toBe('context_fallback');
    expect(classify(status(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } }))).toBe('context_fallback');
    expect(classify(status(400, { error: { code: 'content_policy_violation', message: 'Your request was rejected as a result of our safety system.' } }))).toBe('content_fallback');
    expect(classify(status(400, { type: 'error', error: { type: 'invalid_request_error', message: 'Output blocked by content filtering policy' } }))).toBe('content_fallback');
  });

  it('the vendor reason reaches the client under a stable code', () => {
    const error = status(400, { error: { code: 'content_policy_violation', message: 'Your request was rejected as a result of our safety system.' } });
    expect(error.code).toBe('content_policy_violation');
    expect(error.status).toBe(400);
    expect(error.message).toBe('Your request was rejected as a result of our safety system.');
  });

  it('retries a connect failure, a missing access token and a stream that failed before content; moves on after a timeout or a refused credential', () => {
    expect(classify(failed('connect'))).toBe('retry');
    expect(classify(failed('token'))).toBe('retry');
    expect(classify(failed('token_refused'))).toBe('next');
    expect(classify(failed('stream_before_content'))).toBe('retry');
    expect(classify(failed('headers_timeout'))).toBe('next');
    expect(classify(failed('first_token_timeout'))).toBe('next');
    expect(classify(failed('idle_timeout'))).toBe('next');
  });

  it('anything that is not an attempt failure is final', () => {
    expect(classify(new GatewayError('invalid_request', 'bad'))).toBe('final');
    expect(classify(new Error('bug'))).toBe('final');
  });

  it('labels outcomes for the metrics', () => {
    expect(outcomeLabel(status(503))).toBe('503');
    expect(outcomeLabel(failed('headers_timeout'))).toBe('headers_timeout');
    expect(outcomeLabel(failed('token'))).toBe('token');
    expect(outcomeLabel(new GatewayError('invalid_request', 'bad'))).toBe('invalid_request');
  });
});

describe('retryAfterMs', () => {
  it('reads retry-after-ms first, then Retry-After in seconds or as a date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' })).toBe(1500);
    expect(retryAfterMs({ 'retry-after': '2' })).toBe(2000);
    expect(retryAfterMs({ 'retry-after': '0.5' })).toBe(500);
    const now = Date.parse('2026-12-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': 'Tue, 01 Dec 2026 00:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Tue, 01 Dec 2026 00:00:00 GMT' }, now + 5000)).toBe(0);
  });

  it('gives null when the upstream said nothing readable', () => {
    expect(retryAfterMs({})).toBeNull();
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterMs({ 'retry-after-ms': 'x' })).toBeNull();
  });
});
