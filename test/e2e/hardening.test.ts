/**
 * Hardening of the HTTP edge, on a real gateway with its simulator, over every route of the route table
 * (its kind, JSON, multipart or body-less, and its path parameters come from fuzzRoutes; one sample per
 * route from test/helpers/route-samples.ts):
 *  (a) a body over the limit is a 413 in the route's client format (a multipart file part over its declared size too);
 *  (b) every header line the gateway writes (JSON, SSE, binary downloads, errors) is clean, with a `req_` request id;
 *  (c) only the gateway's own headers reach an upstream: no client header, never the client's key.
 * Unparsable bodies and hostile path parameters: hardening-requests.test.ts; upstream timeouts and the
 * token estimate on pathological text: hardening-upstream.test.ts.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { errorShapeProblems, fuzzRoutes, headerProblems, rawHttp, type FuzzRoute, type RawResponse } from '../helpers/fuzz.js';
import { encodeMultipart } from '../helpers/fuzz-requests.js';
import type { TestGateway } from '../helpers/gateway.js';
import {
  expectError, fillPath, FORM_BOUNDARY, FORM_SAMPLE, SAMPLE, sampleRequest, settledState, startSampleGateway, versionHeaders, type SampleRequest,
} from '../helpers/route-samples.js';

const ROUTES = fuzzRoutes();
const POSTS = ROUTES.filter((r) => r.method === 'POST');
const route = (id: string): FuzzRoute => ROUTES.find((r) => r.id === id)!;

/** The `type` each format gives a 413 (spec 7 error families in the client vocabulary; Cohere's shape has no type). */
const TOO_LARGE_TYPE = { openai: 'invalid_request_error', messages: 'request_too_large', cohere: undefined } as const;

describeStore('hardening', () => {
  let t: TestGateway;
  let account: { id: string; key: string };

  beforeAll(async () => {
    t = await startSampleGateway();
    account = await t.account('1');
  });
  afterAll(async () => { await t?.dispose(); });

  const post = (r: FuzzRoute, body: string | Buffer | undefined, headers: Record<string, string> = {}) => rawHttp(t.url, {
    method: 'POST', path: r.path, body,
    headers: { authorization: `Bearer ${account.key}`, ...versionHeaders(t, r), ...headers },
  });
  const raw = (req: SampleRequest) => rawHttp(t.url, req);

  describe('(a) body limit', () => {
    it('answers 413 in the client format on every POST route, declared or streamed, charging nothing', async () => {
      const limit = t.gw.generation().gateway.settings.bodyLimitBytes;
      const before = await settledState(t, account.id);
      const upstreamCalls = t.sim.requests;
      for (const r of POSTS) {
        // A body-less POST (a path like finalize's {file_id}) is refused on its length like any other.
        const path = fillPath(r.path, Object.fromEntries(r.pathParams.map((p) => [p, 'unknown'])));
        const text = JSON.stringify({ ...SAMPLE[r.id], pad: '' });
        const over = Buffer.from(text.replace('"pad":""', `"pad":"${'x'.repeat(limit + 1 - Buffer.byteLength(text))}"`));
        expect(over.length).toBe(limit + 1);
        // Declared length over the limit: refused from the headers.
        const declared = await rawHttp(t.url, { method: 'POST', path, body: over, headers: { authorization: `Bearer ${account.key}`, ...versionHeaders(t, r), 'content-type': 'application/json' } });
        const body = expectError(r, declared, 413, 'payload_too_large', `${r.id} declared`);
        expect(body.type).toBe(TOO_LARGE_TYPE[r.shape]);
        // Chunked upload with no length: refused once the limit is crossed.
        const streamed = await fetch(`${t.url}${path}`, {
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

    // A multipart route reads its parts as a stream under its own declared limits, not the JSON body limit.
    it('answers 413 (or the route\'s declared 400) in the client format for a file part one byte over its declared size, before any upstream call', async () => {
      const forms = ROUTES.filter((r) => r.body === 'multipart');
      expect(forms.length).toBeGreaterThan(0);
      for (const r of forms) {
        const spec = t.gw.generation().gateway.routes.find((c) => c.manifest.id === r.id)!.multipart!;
        for (const [name, part] of Object.entries(spec.files)) {
          const before = await settledState(t, account.id);
          const upstreamCalls = t.sim.requests;
          const parts = (FORM_SAMPLE[r.id] ?? []).filter((p) => p.name !== name);
          // Of a type the part accepts (its first declared one), so the size is what is refused.
          const type = part.mime ? [...part.mime][0]! : 'application/octet-stream';
          const body = encodeMultipart([...parts, { name, filename: 'big.bin', type, data: Buffer.alloc(part.maxBytes + 1, 0x61) }], FORM_BOUNDARY);
          const res = await post(r, body, { 'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}` });
          // A route may declare a part over its size an invalid field (`body.oversize`, issue 12 documents).
          if (spec.oversize === 'invalid_request') {
            expect(JSON.stringify(expectError(r, res, 400, 'invalid_request', `${r.id} part ${name}`))).toContain(`larger than ${part.maxBytes} bytes`);
          } else {
            expect(expectError(r, res, 413, 'payload_too_large', `${r.id} part ${name}`).type).toBe(TOO_LARGE_TYPE[r.shape]);
          }
          expect(t.sim.requests, `${r.id}: no upstream call`).toBe(upstreamCalls);
          expect(await settledState(t, account.id)).toEqual(before);
        }
      }
    }, 60_000);
  });

  describe('(b) response headers', () => {
    /** Requests through the pipeline on every route: its sample (JSON, SSE, a form, a download), and the errors its kind can meet. */
    async function pipelineAnswers(): Promise<Array<{ label: string; res: RawResponse }>> {
      const broke = await t.account('0');
      const out: Array<{ label: string; res: RawResponse }> = [];
      const c = { t, account };
      const withHeaders = (req: SampleRequest, headers: Record<string, string>): SampleRequest => ({ ...req, headers: { ...req.headers, ...headers } });
      const withJson = (req: SampleRequest, body: Record<string, unknown>): SampleRequest => ({ ...req, body: JSON.stringify(body) });
      for (const r of ROUTES) {
        const sample = await sampleRequest(c, r);
        const cases: Array<[string, SampleRequest]> = [
          ['200', sample],
          ['401 no key', withHeaders(sample, { authorization: '' })],
          ['401 unknown key', withHeaders(sample, { authorization: 'Bearer gw-unknown' })],
          ['client x-request-id', withHeaders(await sampleRequest(c, r), { 'x-request-id': 'client-chosen-id' })],
        ];
        const version = Object.keys(versionHeaders(t, r));
        if (version.length > 0) cases.push(['400 no version header', { ...sample, headers: Object.fromEntries(Object.entries(sample.headers).filter(([n]) => !version.includes(n))) }]);
        if (r.pathParams.length > 0) cases.push(['404 unknown id', { ...sample, path: fillPath(r.path, Object.fromEntries(r.pathParams.map((p) => [p, 'no-such-id']))) }]);
        if (r.body === 'json') cases.push(['400 invalid body', withJson(sample, { ...SAMPLE[r.id], model: 5 })]);
        if (r.body === 'multipart') cases.push(['400 no file part', { ...sample, body: encodeMultipart([{ name: 'unexpected', data: 'x' }], FORM_BOUNDARY) }]);
        if (r.hasUpstream) cases.push(['400 unknown model', withJson(sample, { ...SAMPLE[r.id], model: 'nope' })]);
        if (r.streams) cases.push(['200 SSE', withJson(sample, { ...SAMPLE[r.id], stream: true })]);
        if (r.billable) cases.push(['402', withHeaders(sample, { authorization: `Bearer ${broke.key}` })]);
        for (const [label, req] of cases) out.push({ label: `${r.id} ${label}`, res: await raw(req) });
        // Upstream failures, on the routes that call an upstream through their sample's model.
        const model = SAMPLE[r.id]?.model;
        if (!r.hasUpstream || typeof model !== 'string') continue;
        const upstreamModel = t.gw.generation().gateway.offerings.get(model)!.upstreamModel;
        for (const status of [400, 429, 503]) {
          await t.fault({ status, times: 1 }, upstreamModel);
          out.push({ label: `${r.id} upstream ${status}`, res: await raw(sample) });
        }
        if (r.streams) {
          await t.fault({ error_after_chunks: 2, times: 1 }, upstreamModel);
          out.push({ label: `${r.id} SSE error mid-stream`, res: await raw(withJson(sample, { ...SAMPLE[r.id], stream: true })) });
        }
      }
      await t.clearFaults();
      for (const [label, path, headers] of [
        ['models filtered', '/v1/models?service_type=chat', {}], ['models 401', '/v1/models', { authorization: 'Bearer gw-unknown' }],
      ] as Array<[string, string, Record<string, string>]>) {
        out.push({ label, res: await rawHttp(t.url, { method: 'GET', path, headers: { authorization: `Bearer ${account.key}`, ...headers } }) });
      }
      return out;
    }

    it('every pipeline answer (JSON, SSE, downloads, errors) has clean header lines and a req_ request id; every sample answers 200', async () => {
      const answers = await pipelineAnswers();
      const problems = answers.flatMap(({ label, res }) => headerProblems(res, { requireRequestId: true }).map((p) => `${label} (${res.status}): ${p}`));
      expect(problems).toEqual([]);
      const byLabel = new Map(answers.map((a) => [a.label, a.res]));
      expect(ROUTES.map((r) => [r.id, byLabel.get(`${r.id} 200`)!.status])).toEqual(ROUTES.map((r) => [r.id, 200]));
      // Spot checks: the statuses the cases aim at, the SSE head, the retry-after of an upstream 429, a download's head.
      expect(byLabel.get('chat-completions 200 SSE')!.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(byLabel.get('messages 402')!.status).toBe(402);
      expect(byLabel.get('messages upstream 429')!.status).toBe(429);
      expect(byLabel.get('messages upstream 429')!.headers['retry-after']).toMatch(/^\d+$/);
      expect(byLabel.get('chat-completions client x-request-id')!.headers['x-request-id']).not.toBe('client-chosen-id');
      for (const r of ROUTES.filter((x) => x.answerTypes.length === 0 || x.answerTypes.includes('*/*'))) {
        // An answer the OpenAPI document declares as any type is a download: the file's own type, an attachment.
        expect(byLabel.get(`${r.id} 200`)!.headers['content-disposition'], r.id).toMatch(/^attachment; filename="[^"\r\n]*"$/);
      }
      for (const r of ROUTES) {
        for (const [suffix, status] of [['401 no key', 401], ['404 unknown id', 404], ['400 no version header', 400], ['400 no file part', 400]] as const) {
          const res = byLabel.get(`${r.id} ${suffix}`);
          if (!res) continue;
          expect(res.status, `${r.id} ${suffix}: ${res.body.slice(0, 200)}`).toBe(status);
          expect(errorShapeProblems(r.shape, res.body), `${r.id} ${suffix}`).toEqual([]);
        }
      }
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
        { label: '400 multipart on a JSON route', res: await post(chat, '--x--', { 'content-type': 'multipart/form-data; boundary=x' }) },
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
});
