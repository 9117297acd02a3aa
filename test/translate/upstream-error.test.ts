/** Upstream errors become the gateway's codes; an upstream's auth text (which can echo a key) is never shown. */
import { describe, expect, it } from 'vitest';
import { mapUpstreamError } from '../../src/translate/upstream-error.js';

describe('mapUpstreamError', () => {
  it('hides the upstream authentication message', () => {
    const error = mapUpstreamError(401, { error: { message: 'Incorrect API key provided: sk-proj-abc123' } }, {});
    expect(error.code).toBe('upstream_error');
    expect(error.status).toBe(502);
    expect(error.message).not.toContain('sk-');
  });

  it('keeps retry-after on a 429', () => {
    const error = mapUpstreamError(429, null, { 'retry-after': '3', 'retry-after-ms': '2500' });
    expect(error.status).toBe(429);
    expect(error.extra.headers).toEqual({ 'retry-after': '3', 'retry-after-ms': '2500' });
  });

  it('shows a 4xx request error with its param, and maps 5xx to a generic 502', () => {
    const bad = mapUpstreamError(400, { error: { message: "Invalid 'temperature'", param: 'temperature' } }, {});
    expect(bad).toMatchObject({ code: 'invalid_request', status: 400, message: "Invalid 'temperature'" });
    expect(bad.extra.param).toBe('temperature');
    expect(mapUpstreamError(503, '<html>down</html>', {})).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(mapUpstreamError(422, { error: { message: 'bad enum' } }, {})).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(mapUpstreamError(413, null, {})).toMatchObject({ status: 413 });
    expect(mapUpstreamError(402, { error: { message: 'vendor credit exhausted' } }, {})).toMatchObject({ code: 'upstream_error', status: 502 });
  });
});
