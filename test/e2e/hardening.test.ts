/**
 * Hardening of the HTTP edge, on a real gateway with its simulator:
 *  (a) a body over the limit is a 413 in the route's client format;
 *  (b) every header line the gateway writes (JSON, SSE, errors) is clean, with a `req_` request id;
 *  (c) only the gateway's own headers reach an upstream: no client header, never the client's key;
 *  (d) malformed JSON, a wrong content type, an empty body, non-object JSON: 400 in the route's format;
 *  (e) upstream timeouts come from the provider manifest (504 in the client format, nothing charged);
 *  (f) a small body cannot pin the event loop: the pre-flight token estimate stays fast on pathological text.
 */
import { rm } from 'node:fs/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { errorShapeProblems, fuzzRoutes, headerProblems, rawHttp, type FuzzRoute, type RawResponse } from '../helpers/fuzz.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ROUTES = fuzzRoutes();
const POSTS = ROUTES.filter((r) => r.method === 'POST');
const route = (id: string): FuzzRoute => ROUTES.find((r) => r.id === id)!;

/** A small request each POST route answers with 200. */
const SAMPLE: Record<string, Record<string, unknown>> = {
  'chat-completions': { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
  responses: { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 16 },
  messages: { model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  'count-tokens': { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] },
  rerank: { model: 'rerank-pro', query: 'hi', documents: ['hello', 'world'] },
  translate: { model: 'translator-standard', text: 'hi', to: 'de' },
  embeddings: { model: 'text-embedding-3-small', input: 'hi' },
  moderations: { model: 'content-safety-text', text: 'hi' },
  'language-analyze': { model: 'language-standard', text: 'hi' },
  'language-summarize': { model: 'language-standard', text: 'Hi there.' },
};

/** The `type` each format gives a 413 and a 504 (spec 7 error families in the client vocabulary). */
const TOO_LARGE_TYPE = { openai: 'invalid_request_error', messages: 'request_too_large' } as const;
const TIMEOUT_TYPE = { openai: 'server_error', messages: 'timeout_error' } as const;

type ErrorBody = { type?: string; error: { message: string; type: string; code?: string; param?: unknown } };

function versionHeaders(t: TestGateway, r: FuzzRoute): Record<string, string> {
  const compiled = t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)!;
  return Object.fromEntries(compiled.requiredHeaders.map((h) => [h.name, [...h.values][0]!]));
}

/** Asserts an error answer in the route's shape, with status and code; returns the body. */
function expectError(r: FuzzRoute, res: RawResponse, status: number, code: string, label: string): ErrorBody {
  expect(res.status, `${label}: ${res.body.slice(0, 300)}`).toBe(status);
  expect(res.headers['content-type'], label).toMatch(/^application\/json/);
  expect(errorShapeProblems(r.shape, res.body), label).toEqual([]);
  const body = JSON.parse(res.body) as ErrorBody;
  expect(body.error.code, `${label}: ${res.body}`).toBe(code);
  if (r.shape === 'messages') expect(body.type).toBe('error');
  return body;
}

/** Balance, newest usage row and open holds, once no hold is open. */
async function settledState(t: TestGateway, accountId: string): Promise<{ balanceNano: bigint; lastRow: string | null }> {
  for (let i = 0; i < 100; i++) {
    const account = (await t.gw.runtime.ledger.getAccount(accountId))!;
    if (account.openHolds === 0) {
      const usage = await t.gw.runtime.ledger.listUsage(accountId, { limit: 1 });
      return { balanceNano: account.balanceNano, lastRow: usage.data[0]?.id ?? null };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('a hold stayed open');
}

describeStore('hardening', () => {
  let t: TestGateway;
  let account: { id: string; key: string };

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('1');
  });
  afterAll(async () => { await t?.dispose(); });

  const post = (r: FuzzRoute, body: string | Buffer | undefined, headers: Record<string, string> = {}) => rawHttp(t.url, {
    method: 'POST', path: r.path, body,
    headers: { authorization: `Bearer ${account.key}`, ...versionHeaders(t, r), ...headers },
  });

  describe('(a) body limit', () => {
    it('answers 413 in the client format on every POST route, declared or streamed, charging nothing', async () => {
      const limit = t.gw.generation().gateway.settings.bodyLimitBytes;
      const before = await settledState(t, account.id);
      const upstreamCalls = t.sim.requests;
      for (const r of POSTS) {
        const text = JSON.stringify({ ...SAMPLE[r.id], pad: '' });
        const over = Buffer.from(text.replace('"pad":""', `"pad":"${'x'.repeat(limit + 1 - Buffer.byteLength(text))}"`));
        expect(over.length).toBe(limit + 1);
        // Declared length over the limit: refused from the headers.
        const declared = await post(r, over, { 'content-type': 'application/json' });
        const body = expectError(r, declared, 413, 'payload_too_large', `${r.id} declared`);
        expect(body.error.type).toBe(TOO_LARGE_TYPE[r.shape]);
        // Chunked upload with no length: refused once the limit is crossed.
        const streamed = await fetch(`${t.url}${r.path}`, {
          method: 'POST', duplex: 'half',
          headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...versionHeaders(t, r) },
          body: new ReadableStream({ start(c) { for (let i = 0; i < over.length; i += 1 << 20) c.enqueue(over.subarray(i, i + (1 << 20))); c.close(); } }),
        } as RequestInit);
        expect(streamed.status, `${r.id} chunked`).toBe(413);
        expect(errorShapeProblems(r.shape, await streamed.text()), `${r.id} chunked`).toEqual([]);
      }
      // Exactly at the limit is not too large (it is refused for its unknown model instead).
      const chat = route('chat-completions');
      const text = JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }], pad: '' });
      const exact = text.replace('"pad":""', `"pad":"${'x'.repeat(limit - Buffer.byteLength(text))}"`);
      expect(Buffer.byteLength(exact)).toBe(limit);
      expectError(chat, await post(chat, exact, { 'content-type': 'application/json' }), 400, 'model_not_found', 'at the limit');
      expect(await settledState(t, account.id)).toEqual(before);
      expect(t.sim.requests).toBe(upstreamCalls);
    }, 60_000);
  });

  describe('(b) response headers', () => {
    /** Requests through the pipeline: successes (JSON and SSE) and its errors, on every route. */
    async function pipelineAnswers(): Promise<Array<{ label: string; res: RawResponse }>> {
      const broke = await t.account('0');
      const out: Array<{ label: string; res: RawResponse }> = [];
      const json = { 'content-type': 'application/json' };
      for (const r of POSTS) {
        const sample = SAMPLE[r.id]!;
        const upstreamModel = t.gw.generation().gateway.offerings.get(sample.model as string)!.upstreamModel;
        const cases: Array<[string, string, Record<string, string>]> = [
          ['200 JSON', JSON.stringify(sample), json],
          ['400 schema', JSON.stringify({ ...sample, model: 5 }), json],
          ['400 unknown model', JSON.stringify({ ...sample, model: 'nope' }), json],
          ['401 no key', JSON.stringify(sample), { ...json, authorization: '' }],
          ['401 unknown key', JSON.stringify(sample), { ...json, authorization: 'Bearer gw-unknown' }],
          ['client x-request-id', JSON.stringify(sample), { ...json, 'x-request-id': 'client-chosen-id' }],
        ];
        if (r.streams) cases.push(['200 SSE', JSON.stringify({ ...sample, stream: true }), json]);
        if (r.billable) cases.push(['402', JSON.stringify(sample), { ...json, authorization: `Bearer ${broke.key}` }]);
        for (const [label, body, headers] of cases) out.push({ label: `${r.id} ${label}`, res: await post(r, body, headers) });
        for (const status of [400, 429, 503]) {
          await t.fault({ status, times: 1 }, upstreamModel);
          out.push({ label: `${r.id} upstream ${status}`, res: await post(r, JSON.stringify(sample), json) });
        }
        if (r.streams) {
          await t.fault({ error_after_chunks: 2, times: 1 }, upstreamModel);
          out.push({ label: `${r.id} SSE error mid-stream`, res: await post(r, JSON.stringify({ ...sample, stream: true }), json) });
        }
      }
      await t.clearFaults();
      for (const [label, path, headers] of [
        ['models 200', '/v1/models', {}], ['models filtered', '/v1/models?service_type=chat', {}], ['model 200', '/v1/models/gpt-4o', {}],
        ['model 404', '/v1/models/nope', {}], ['models 401', '/v1/models', { authorization: 'Bearer gw-unknown' }],
      ] as Array<[string, string, Record<string, string>]>) {
        out.push({ label, res: await rawHttp(t.url, { method: 'GET', path, headers: { authorization: `Bearer ${account.key}`, ...headers } }) });
      }
      return out;
    }

    it('every pipeline answer (JSON, SSE, errors) has clean header lines and a req_ request id', async () => {
      const answers = await pipelineAnswers();
      const problems = answers.flatMap(({ label, res }) => headerProblems(res, { requireRequestId: true }).map((p) => `${label} (${res.status}): ${p}`));
      expect(problems).toEqual([]);
      // Spot checks: the statuses the cases aim at, the SSE head, the retry-after of an upstream 429.
      const byLabel = new Map(answers.map((a) => [a.label, a.res]));
      expect(byLabel.get('chat-completions 200 SSE')!.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(byLabel.get('messages 402')!.status).toBe(402);
      expect(byLabel.get('messages upstream 429')!.status).toBe(429);
      expect(byLabel.get('messages upstream 429')!.headers['retry-after']).toMatch(/^\d+$/);
      expect(byLabel.get('chat-completions client x-request-id')!.headers['x-request-id']).not.toBe('client-chosen-id');
      const ids = answers.map((a) => a.res.headers['x-request-id']).filter((id) => id !== undefined);
      expect(new Set(ids).size).toBe(ids.length);
    }, 60_000);

    it('answers refused before the pipeline (413, bad JSON, content type, bad URL, unknown route) carry a req_ request id too', async () => {
      const limit = t.gw.generation().gateway.settings.bodyLimitBytes;
      const chat = route('chat-completions');
      const messages = route('messages');
      const answers: Array<{ label: string; res: RawResponse }> = [
        { label: '413 declared length', res: await post(chat, undefined, { 'content-type': 'application/json', 'content-length': String(limit + 1) }) },
        { label: '400 malformed JSON', res: await post(chat, '{"model":', { 'content-type': 'application/json' }) },
        { label: '400 malformed JSON (messages)', res: await post(messages, '{"model":', { 'content-type': 'application/json' }) },
        { label: '400 wrong content type', res: await post(chat, 'model=gpt-4o-mini', { 'content-type': 'application/x-www-form-urlencoded' }) },
        { label: '400 prototype key', res: await post(chat, '{"__proto__":{"x":1}}', { 'content-type': 'application/json' }) },
        { label: '400 bad URL encoding', res: await rawHttp(t.url, { method: 'GET', path: '/v1/models/%E0%A4%A', headers: { authorization: `Bearer ${account.key}` } }) },
        { label: '404 unknown route', res: await rawHttp(t.url, { method: 'GET', path: '/v1/nothing-here', headers: { authorization: `Bearer ${account.key}` } }) },
      ];
      // Header lines are clean everywhere; the request id is what is missing here.
      expect(answers.flatMap(({ label, res }) => headerProblems(res, { requireRequestId: false }).map((p) => `${label}: ${p}`))).toEqual([]);
      const missing = answers.filter(({ res }) => !/^req_[0-9a-f]{24}$/.test(res.headers['x-request-id'] ?? '')).map(({ label, res }) => `${label} (${res.status})`);
      expect(missing).toEqual([]);
    }, 60_000);

    it('honours a client\'s Connection: close on SSE answers (no keep-alive forced)', async () => {
      const chat = route('chat-completions');
      const res = await post(chat, JSON.stringify({ ...SAMPLE['chat-completions'], stream: true }), { 'content-type': 'application/json' });
      expect(res.status).toBe(200);
      expect(res.headers.connection).not.toBe('keep-alive');
    });
  });

  describe('(c) upstream header allowlist', () => {
    /** Client headers an upstream must never see (values are unique so a copy is recognisable). */
    const CLIENT_HEADERS: Record<string, string> = {
      cookie: 'session=client-cookie-9f2c', 'x-forwarded-for': '203.0.113.77', 'x-real-ip': '203.0.113.78', forwarded: 'for=203.0.113.79',
      'x-custom-secret': 'client-secret-5d1e', 'anthropic-beta': 'client-beta-2025-01-01', 'openai-organization': 'org-client-7a3b',
      'openai-project': 'proj-client-1c2d', 'user-agent': 'client-agent/9.9', 'x-request-id': 'client-request-id-4e5f',
      'x-stainless-lang': 'client-lang', origin: 'https://client.example', referer: 'https://client.example/page', 'accept-language': 'x-client',
    };

    /** Which client headers reached the upstream: their (unique) value in any upstream header. */
    function leaks(upstream: Record<string, string | string[]>, sent: Record<string, string>): string[] {
      const values = Object.values(upstream).map((v) => (Array.isArray(v) ? v.join(', ') : v));
      return Object.entries(sent).filter(([, value]) => values.some((v) => v.includes(value))).map(([name]) => name);
    }

    const cases: Array<{ label: string; route: string; body: Record<string, unknown>; upstreamPath: string; keyStyle: 'bearer' | 'x-api-key' }> = [
      { label: 'chat, native', route: 'chat-completions', body: SAMPLE['chat-completions']!, upstreamPath: '/v1/chat/completions', keyStyle: 'bearer' },
      { label: 'chat, native, stream', route: 'chat-completions', body: { ...SAMPLE['chat-completions'], stream: true }, upstreamPath: '/v1/chat/completions', keyStyle: 'x-api-key' },
      { label: 'chat over messages', route: 'chat-completions', body: { ...SAMPLE['chat-completions'], model: 'claude-haiku-4-5' }, upstreamPath: '/v1/messages', keyStyle: 'bearer' },
      { label: 'responses, native', route: 'responses', body: { ...SAMPLE.responses, model: 'gpt-4o' }, upstreamPath: '/v1/responses', keyStyle: 'x-api-key' },
      { label: 'responses over chat', route: 'responses', body: SAMPLE.responses!, upstreamPath: '/v1/chat/completions', keyStyle: 'bearer' },
      { label: 'messages', route: 'messages', body: SAMPLE.messages!, upstreamPath: '/v1/messages', keyStyle: 'x-api-key' },
      { label: 'messages, stream', route: 'messages', body: { ...SAMPLE.messages, stream: true }, upstreamPath: '/v1/messages', keyStyle: 'bearer' },
      { label: 'count_tokens', route: 'count-tokens', body: SAMPLE['count-tokens']!, upstreamPath: '/v1/messages/count_tokens', keyStyle: 'x-api-key' },
    ];

    it.each(cases)('$label: no client header and never the gw- key reach the upstream', async ({ route: id, body, upstreamPath, keyStyle }) => {
      const r = route(id);
      await request(`${t.sim.url}/__sim/reset`, { method: 'POST' }).then((res) => res.body.text());
      const auth: Record<string, string> = keyStyle === 'bearer' ? { authorization: `Bearer ${account.key}` } : { 'x-api-key': account.key };
      // A version the route accepts but the provider does not send, to tell the client's from the provider's.
      const version: Record<string, string> = r.shape === 'messages' ? { 'anthropic-version': '2026-10-21' } : {};
      const sent = { ...CLIENT_HEADERS, ...auth, ...version, 'content-type': 'application/json; charset=utf-8' };
      const res = await rawHttp(t.url, { method: 'POST', path: r.path, headers: sent, body: JSON.stringify(body) });
      expect(res.status, res.body.slice(0, 300)).toBe(200);
      const last = (await (await request(`${t.sim.url}/__sim/last`)).body.json()) as { path: string; headers: Record<string, string | string[]>; body: unknown };
      expect(last.path).toBe(upstreamPath);
      // Exactly which client headers reached the upstream: none.
      expect(leaks(last.headers, { ...CLIENT_HEADERS, ...auth, ...version })).toEqual([]);
      expect(JSON.stringify(last)).not.toContain(account.key);
      expect(JSON.stringify(last)).not.toContain('gw-');
      // What the upstream does see: the gateway's own transport headers and the provider's static ones.
      const provider = t.gw.generation().gateway.providers.get(t.gw.generation().gateway.offerings.get(body.model as string)!.providerId)!;
      const expected = new Set(['host', 'connection', 'content-type', 'content-length', 'accept', 'transfer-encoding', ...Object.keys(provider.headers).map((h) => h.toLowerCase())]);
      expect(Object.keys(last.headers).filter((h) => !expected.has(h))).toEqual([]);
      expect(last.headers['content-type']).toBe('application/json');
      for (const [name, value] of Object.entries(provider.headers)) expect(last.headers[name.toLowerCase()]).toBe(value);
    });
  });

  describe('(d) unparsable and non-object bodies', () => {
    it.each(POSTS.map((r) => [r.id, r] as const))('%s: 400 in the route format, no upstream call, nothing charged', async (_id, r) => {
      const before = await settledState(t, account.id);
      const upstreamCalls = t.sim.requests;
      const json = { 'content-type': 'application/json' };
      const cases: Array<[string, string | undefined, Record<string, string>, string]> = [
        ['malformed JSON', '{"model": "gpt-4o-mini", "messages": [', json, 'invalid_json'],
        ['trailing garbage', `${JSON.stringify(SAMPLE[r.id])}x`, json, 'invalid_json'],
        ['single quotes', "{'model':'gpt-4o-mini'}", json, 'invalid_json'],
        ['wrong content type (text/plain)', JSON.stringify(SAMPLE[r.id]), { 'content-type': 'text/plain' }, 'invalid_request'],
        ['wrong content type (form)', 'model=gpt-4o-mini', { 'content-type': 'application/x-www-form-urlencoded' }, 'invalid_request'],
        ['wrong content type (multipart)', '--x--', { 'content-type': 'multipart/form-data; boundary=x' }, 'invalid_request'],
        ['empty body, JSON content type', '', json, 'invalid_json'],
        ['empty body, no content type', undefined, {}, 'invalid_request'],
        ['JSON array', JSON.stringify([SAMPLE[r.id]]), json, 'invalid_request'],
        ['JSON null', 'null', json, 'invalid_request'],
        ['JSON string', '"hello"', json, 'invalid_request'],
        ['JSON number', '42', json, 'invalid_request'],
      ];
      for (const [label, body, headers, code] of cases) {
        const res = await post(r, body, headers);
        const error = expectError(r, res, 400, code, `${r.id} ${label}`);
        expect(error.error.type, label).toBe('invalid_request_error');
      }
      expect(await settledState(t, account.id)).toEqual(before);
      expect(t.sim.requests).toBe(upstreamCalls);
    });
  });
});

describeStore('hardening: pathological text in the token estimate', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  // A zero balance makes the rate-limit stage estimate the prompt and refuse with 402 before any
  // upstream call. 32 000 characters of one letter is a 64 KB body; the o200k BPE is quadratic in
  // the length of one pre-token, so the gateway counts bounded chunks (src/tokenize.ts). How long
  // it takes is a benchmark figure, not an assertion: this checks the answer is still right.
  it.each([
    ['chat-completions', 'é', (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })],
    ['responses', 'ü', (text: string) => ({ model: 'gpt-4o-mini', input: text })],
    ['messages', 'ñ', (text: string) => ({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: text }] })],
  ] as const)('%s: a 64 KB run of one accented letter (%s) is estimated and refused cleanly', async (id, letter, build) => {
    const broke = await t.account('0');
    const r = route(id);
    const upstreamCalls = t.sim.requests;
    const res = await rawHttp(t.url, {
      method: 'POST', path: r.path, body: JSON.stringify(build(letter.repeat(32_000))),
      headers: { authorization: `Bearer ${broke.key}`, 'content-type': 'application/json', ...versionHeaders(t, r) },
    });
    expectError(r, res, 402, 'insufficient_balance', id);
    expect(t.sim.requests).toBe(upstreamCalls);
  }, 60_000);
});

describeStore('hardening: upstream timeouts from the provider manifest', () => {
  let t: TestGateway;
  let config: ConfigCopy;
  let account: { id: string; key: string };

  beforeAll(async () => {
    config = await copyConfig();
    await config.editYaml('providers/anthropic.yaml', (doc) => { doc.timeouts.headers_ms = 300; });
    t = await startTestGateway({ configFile: config.configFile });
    account = await t.account('1');
  });
  afterAll(async () => {
    await t?.dispose();
    if (config) await rm(config.dir, { recursive: true, force: true });
  });

  const send = (r: FuzzRoute, body: Record<string, unknown>) => rawHttp(t.url, {
    method: 'POST', path: r.path, body: JSON.stringify(body),
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...versionHeaders(t, r) },
  });

  it('answers 504 in the client shape from headers_ms: 300 against a 1000 ms simulator latency, charging nothing', async () => {
    expect(t.gw.generation().gateway.providers.get('anthropic')!.timeouts.headersMs).toBe(300);
    const upstream = t.gw.generation().gateway.offerings.get('claude-haiku-4-5')!.upstreamModel;
    await t.fault({ latency_ms: 1000 }, upstream);
    const before = await settledState(t, account.id);
    for (const [id, body] of [
      ['messages', SAMPLE.messages!], ['messages', { ...SAMPLE.messages, stream: true }], ['count-tokens', SAMPLE['count-tokens']!],
      ['chat-completions', { ...SAMPLE['chat-completions'], model: 'claude-haiku-4-5' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = route(id);
      const res = await send(r, body);
      const error = expectError(r, res, 504, 'upstream_timeout', `${id} ${JSON.stringify(body)}`);
      expect(error.error.type).toBe(TIMEOUT_TYPE[r.shape]);
      // The default headers_ms (120 s) would have waited for the simulator's answer at 1000 ms and
      // returned 200: the 504 itself shows the manifest's 300 ms applied.
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    }
    expect(await settledState(t, account.id)).toEqual(before);
    expect((await t.gw.runtime.ledger.getAccount(account.id))!.heldNano).toBe(0n);
  }, 30_000);

  it('keeps the other providers on their own timeouts, and recovers once the upstream is fast again', async () => {
    const upstream = t.gw.generation().gateway.offerings.get('claude-haiku-4-5')!.upstreamModel;
    await t.clearFaults();
    await t.fault({ latency_ms: 1000, times: 1 }, 'gpt-4o-mini');
    const chat = await send(route('chat-completions'), SAMPLE['chat-completions']!);
    expect(chat.status, chat.body.slice(0, 300)).toBe(200);
    await t.fault({ latency_ms: 100, times: 1 }, upstream);
    const messages = await send(route('messages'), SAMPLE.messages!);
    expect(messages.status, messages.body.slice(0, 300)).toBe(200);
    await t.clearFaults();
  }, 30_000);
});
