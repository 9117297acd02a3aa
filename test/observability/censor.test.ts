/** Censoring of credential fields in log objects (src/observability/censor.ts). */
import { describe, expect, it } from 'vitest';
import { CENSORED, censorFields } from '../../src/observability/censor.js';

describe('censorFields', () => {
  it('returns the very object when nothing is to be censored (nothing allocated)', () => {
    const line = { request_id: 'req_1', route: 'chat-completions', status: 200, duration_ms: 24.6, stream: false, nested: { a: 1, b: [1, 2] } };
    expect(censorFields(line)).toBe(line);
  });

  it('censors apiKey, api_key, key and token at the top and one level down, never the caller\'s object', () => {
    const line = { key: 'opaque-1', cfg: { api_key: 'opaque-2', token: 'opaque-3', name: 'kept' }, provider: { id: 'azure', apiKey: 'opaque-4' } };
    const copy = structuredClone(line);
    const out = censorFields(line);
    expect(out).toEqual({ key: CENSORED, cfg: { api_key: CENSORED, token: CENSORED, name: 'kept' }, provider: { id: 'azure', apiKey: CENSORED } });
    expect(line).toEqual(copy);
  });

  it('censors authorization, x-api-key and cookie in headers, at the top or one level down, in any letter case', () => {
    const out = censorFields({
      headers: { Authorization: 'Bearer opaque', 'x-api-key': 'opaque', accept: '*/*' },
      req: { url: '/v1/x', headers: { authorization: 'Basic opaque', cookie: 'session=opaque', 'user-agent': 'ua' } },
    });
    expect(out).toEqual({
      headers: { Authorization: CENSORED, 'x-api-key': CENSORED, accept: '*/*' },
      req: { url: '/v1/x', headers: { authorization: CENSORED, cookie: CENSORED, 'user-agent': 'ua' } },
    });
  });

  it('leaves arrays, errors and fields deeper than one level to the key-shape redaction of whole lines', () => {
    const err = new Error('boom');
    const line = { list: [{ token: 'a' }], err, deep: { a: { token: 'b' } } };
    expect(censorFields(line)).toBe(line);
  });
});
