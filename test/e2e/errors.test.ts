/** Authentication and request errors on the real HTTP path: spec codes and statuses, client-format bodies. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describeStore('auth and errors', () => {
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    t = await startTestGateway();
    key = (await t.account('1')).key;
  });
  afterAll(async () => { await t?.dispose(); });

  const call = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    fetch(`${t.url}${path}`, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  const chat = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${key}` }) =>
    call('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  it('accepts both header styles on every route', async () => {
    const styles: Array<Record<string, string>> = [{ authorization: `Bearer ${key}` }, { 'x-api-key': key }];
    for (const headers of styles) {
      expect((await call('/v1/models', { headers })).status).toBe(200);
      expect((await call('/v1/models/gpt-4o', { headers })).status).toBe(200);
      const res = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    }
  });

  it('answers 401 for a missing, malformed or unknown key', async () => {
    const bad: Array<Record<string, string>> = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer gw-not-a-key' }, { 'x-api-key': 'sk-other' }];
    for (const headers of bad) {
      for (const res of [await call('/v1/models', { headers }), await chat({ model: 'gpt-4o-mini', messages: [] }, headers)]) {
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: { code: 'invalid_api_key', type: 'authentication_error' } });
      }
    }
  });

  it('answers model_not_found and model_not_available with 400', async () => {
    const unknown = await chat({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: 'model_not_found', param: 'model', type: 'invalid_request_error' } });
    for (const model of ['gpt-4.1-codex-preview', 'gpt-3.5-turbo']) {
      const res = await chat({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'model_not_available' } });
    }
  });

  it('validates the body against the route schema with the offending param', async () => {
    const missing = await chat({ model: 'gpt-4o-mini' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: 'invalid_request', param: 'messages' } });
    const badTemp = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], temperature: 9 });
    expect(await badTemp.json()).toMatchObject({ error: { code: 'invalid_request', param: 'temperature' } });
    const badJson = await chat('{"model": ');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ error: { code: 'invalid_json', type: 'invalid_request_error' } });
  });

  it('answers 413 for a body over the limit and 404 for an unknown route, in the client format', async () => {
    const huge = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const missing = await call('/v1/nothing-here', { headers: { authorization: `Bearer ${key}` } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('serves the catalogue without auth and the OpenAPI document', async () => {
    const catalog = (await (await call('/api/public/catalog')).json()) as { data: Array<Record<string, unknown>> };
    expect(catalog.data.find((o) => o.id === 'gpt-4o-mini')).toEqual({
      id: 'gpt-4o-mini', display_name: 'GPT-4o mini', aliases: ['gpt-4o-mini-2024-07-18'], provider: 'openai', service_type: 'CHAT', availability: 'available', native_responses: false,
      context_window: 128000, max_output_tokens: 16384,
      billing: { unit: 'token', per: 1000000, prices: { input: '0.15', output: '0.60', cached_input: '0.075' } },
    });
    expect(catalog.data.find((o) => o.id === 'gpt-4.1-codex-preview')?.availability).toBe('coming_soon');
    expect(catalog.data.find((o) => o.id === 'gpt-4o')).toMatchObject({ native_responses: true, billing: { prices: { web_search: '0.01' } } });
    expect(catalog.data.find((o) => o.id === 'claude-sonnet-4-5')).toMatchObject({ provider: 'anthropic', context_window: 200000, max_output_tokens: 64000, billing: { prices: { cache_write: '3.75', cached_input: '0.30' } } });
    // Every token-priced offering, of every availability, carries its token limits as integers.
    const tokenPriced = catalog.data.filter((o) => (o.billing as { unit: string }).unit === 'token');
    expect(tokenPriced.map((o) => o.id)).toEqual(expect.arrayContaining(['gpt-4o', 'o4-mini', 'gpt-4.1-codex-preview', 'gpt-3.5-turbo', 'claude-haiku-4-5', 'claude-opus-4-5']));
    for (const o of tokenPriced) {
      expect(Number.isInteger(o.context_window) && (o.context_window as number) >= 1, `${String(o.id)} context_window`).toBe(true);
      // An embedding generates no output tokens: its cap is 0; every other offering's is at least 1.
      const leastOutput = o.service_type === 'EMBEDDING' ? 0 : 1;
      expect(Number.isInteger(o.max_output_tokens) && (o.max_output_tokens as number) >= leastOutput, `${String(o.id)} max_output_tokens`).toBe(true);
      if (o.service_type === 'EMBEDDING') expect(o.max_output_tokens, `${String(o.id)} max_output_tokens`).toBe(0);
      // A speech model's output is audio tokens, not part of its text context (gpt-4o-mini-tts: 2,000 input tokens).
      if (o.service_type !== 'TEXT_TO_SPEECH') expect(o.max_output_tokens as number).toBeLessThanOrEqual(o.context_window as number);
    }
    const openapi = (await (await call('/openapi.json')).json()) as { openapi: string };
    expect(openapi.openapi).toBe('3.1.0');
  });
});
