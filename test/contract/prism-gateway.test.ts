/**
 * Contract: Prism (`prism proxy --errors`) sits between the client and a running gateway and checks every
 * request and response against the generated OpenAPI document (src/generated/openapi.json). With
 * --errors, Prism 5.14 answers a request violation itself (422/401 problem+json, nothing forwarded) and
 * turns a response violation into a 500 problem+json (type .../errors#VIOLATIONS); every violation, warnings
 * included, is also listed in the `sl-violations` header. A clean call therefore has no `sl-violations`
 * header, no problem+json body, and carries the gateway's own `x-request-id` (expectClean, test/helpers/prism.ts).
 * The responses and messages formats are in prism-gateway-formats.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  callJson as call, componentValidator, expectClean, ONLY_2020, prismAjvOptions as prismOptions, sseEvents, startPrismProxy as startPrism, stopChild,
} from '../helpers/prism.js';

const SPEC = resolve('src/generated/openapi.json');
const doc = JSON.parse(readFileSync(SPEC, 'utf8')) as { components: { schemas: Record<string, unknown> } };
const require = createRequire(import.meta.url);

// The contract is store-independent (same HTTP surface on PGlite and PostgreSQL), and Prism is slow to
// start: run it once, on the pglite project.
describe.runIf(storeKind === 'pglite')('Prism contract: the gateway answers what its OpenAPI document promises', () => {
  let t: TestGateway;
  let prism: Awaited<ReturnType<typeof startPrism>>;
  let strictPrism: Awaited<ReturnType<typeof startPrism>>;
  let tmp: string;
  let key: string;
  const chat = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], ...extra });

  beforeAll(async () => {
    t = await startTestGateway();
    key = (await t.account('5')).key;
    // A copy of the document that no real ModelList can satisfy, for the response-side negative control.
    tmp = mkdtempSync(join(tmpdir(), 'gw-prism-'));
    const strict = structuredClone(doc) as any;
    strict.components.schemas.Model.required.push('no_such_field');
    writeFileSync(join(tmp, 'strict.json'), JSON.stringify(strict));
    [prism, strictPrism] = await Promise.all([startPrism(SPEC, t.url), startPrism(join(tmp, 'strict.json'), t.url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stopChild(prism?.child), stopChild(strictPrism?.child)]);
    await t?.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  // Prism skips body validation for a schema its Ajv cannot compile: prove every one compiles, with
  // Ajv 2020 (the document's dialect) and with the very Ajv and schema objects Prism itself builds.
  it('compiles every schema, so Prism really validates every body', async () => {
    const ajv = new Ajv2020({ ...prismOptions });
    ajv.addSchema({ $id: 'https://gateway.local/openapi.json', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.compile({ $ref: `https://gateway.local/openapi.json#/components/schemas/${name}` }), name).not.toThrow();
    }
    const { getHttpOperationsFromSpec } = require('@stoplight/prism-http') as { getHttpOperationsFromSpec(spec: string): Promise<any[]> };
    const ops = await getHttpOperationsFromSpec(SPEC);
    const byDialect = { draft7: new Ajv({ ...prismOptions }), draft2019: new Ajv2019({ ...prismOptions }), draft2020: new Ajv2020({ ...prismOptions }) };
    const failures: string[] = [];
    const dialects = new Set<string>();
    let compiled = 0;
    for (const op of ops) {
      const bodies = [...(op.request?.body?.contents ?? []), ...op.responses.flatMap((r: any) => r.contents ?? [])];
      for (const content of bodies.filter((c: any) => c.schema)) {
        const $schema = String(content.schema.$schema);
        const dialect = /2020-12/.test($schema) ? 'draft2020' : /2019-09/.test($schema) ? 'draft2019' : 'draft7';
        dialects.add(dialect);
        try { byDialect[dialect].compile({ ...content.schema, __bundled__: op.__bundled__ }); compiled++; }
        catch (e) { failures.push(`${op.method} ${op.path} ${content.mediaType}: ${(e as Error).message}`); }
      }
    }
    expect(failures).toEqual([]);
    expect(compiled).toBeGreaterThanOrEqual(ops.length);
    // Without `jsonSchemaDialect` Prism tags OAS 3.1 schemas as draft-07; then 2020-only keywords would
    // be ignored without a word. Refuse them until the document declares its dialect.
    if (dialects.has('draft7')) {
      const used = ONLY_2020.filter((k) => JSON.stringify(doc).includes(`"${k}":`));
      expect(used, 'keywords draft-07 Ajv ignores').toEqual([]);
    }
  });

  // A plain chat completion, and one with tools: both ChatCompletion-shaped, both charged normally.
  it('chat completion and chat with tools pass without violations', async () => {
    const plain = await call(prism.url, '/v1/chat/completions', { key, body: chat() });
    expectClean(plain, 200);
    expect(plain.json).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini' });
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const withTools = await call(prism.url, '/v1/chat/completions', { key, body: chat({ tools, tool_choice: 'auto' }) });
    expectClean(withTools, 200);
    expect(withTools.json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ type: 'function', function: { name: 'get_weather' } }] } });
  });

  // Prism only sees `type: string` for text/event-stream, so each event is also checked against
  // ChatCompletionChunk here.
  it('streaming chat passes, and every SSE event is a valid ChatCompletionChunk', async () => {
    const res = await call(prism.url, '/v1/chat/completions', { key, body: chat({ stream: true, stream_options: { include_usage: true } }) });
    expectClean(res, 200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(res.text).map((e) => e.data);
    expect(events.at(-1)).toBe('[DONE]');
    const validChunk = componentValidator(doc.components, 'ChatCompletionChunk');
    for (const data of events.slice(0, -1)) expect(validChunk(JSON.parse(data)), `${data}\n${validChunk.errorsText()}`).toBe(true);
    expect(events.slice(0, -1).some((d) => JSON.parse(d).usage)).toBe(true);
  });

  it('lists models and retrieves one without violations', async () => {
    const list = await call(prism.url, '/v1/models', { key });
    expectClean(list, 200);
    expect(list.json.data.map((m: { id: string }) => m.id)).toContain('gpt-4o-mini');
    const one = await call(prism.url, '/v1/models/gpt-4o-mini', { key });
    expectClean(one, 200);
    expect(one.json).toMatchObject({ id: 'gpt-4o-mini', object: 'model' });
  });

  // Embeddings (spec 4.15), on an OpenAI-format offering and on the Fast and Pro ones, numbers and base64.
  it('embeddings pass without violations, float and base64, and a refused parameter is a documented 400', async () => {
    for (const model of ['text-embedding-3-small', 'embed-fast', 'embed-pro']) {
      for (const encoding_format of ['float', 'base64']) {
        const res = await call(prism.url, '/v1/embeddings', { key, body: { model, input: ['hello', 'world'], encoding_format } });
        expectClean(res, 200);
        expect(res.json).toMatchObject({ object: 'list', model, data: [{ object: 'embedding', index: 0 }, { object: 'embedding', index: 1 }] });
      }
    }
    const refused = await call(prism.url, '/v1/embeddings', { key, body: { model: 'embed-pro', input: 'hello', dimensions: 300 } });
    expectClean(refused, 400);
    expect(refused.json.error).toMatchObject({ code: 'invalid_request', param: 'dimensions' });
  });

  // Error answers are ErrorResponse-shaped and use the declared status codes.
  it('401, 400 model_not_found and 402 are documented error answers', async () => {
    const unauthorized = await call(prism.url, '/v1/models', { key: 'gw-not-a-real-key' });
    expectClean(unauthorized, 401);
    expect(unauthorized.json.error.code).toBe('invalid_api_key');
    const unknown = await call(prism.url, '/v1/chat/completions', { key, body: chat({ model: 'no-such-model' }) });
    expectClean(unknown, 400);
    expect(unknown.json.error.code).toBe('model_not_found');
    const broke = (await t.account('0')).key;
    const payment = await call(prism.url, '/v1/chat/completions', { key: broke, body: chat() });
    expectClean(payment, 402);
    expect(payment.json.error).toMatchObject({ type: expect.any(String), message: expect.any(String) });
  });

  it('public catalogue passes without violations', async () => {
    const res = await call(prism.url, '/api/public/catalog');
    expectClean(res, 200, false); // served outside the pipeline: no x-request-id (none declared either)
    expect(res.json.data.find((o: { id: string }) => o.id === 'gpt-4o-mini')).toMatchObject({ provider: 'openai', availability: 'available', context_window: 128000, max_output_tokens: 16384 });
  });

  // Negative controls: the same checks do fail when the request or the response breaks the contract.
  it('reports a request violation (messages missing) without forwarding it', async () => {
    const res = await call(prism.url, '/v1/chat/completions', { key, body: { model: 'gpt-4o-mini' } });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('problem+json');
    expect(res.headers.get('x-request-id')).toBeNull();
    expect(res.json.validation).toEqual(expect.arrayContaining([expect.objectContaining({ location: ['body'], code: 'required', message: expect.stringContaining('messages') })]));
  });

  it('reports a response violation against a document the gateway does not satisfy', async () => {
    const res = await call(strictPrism.url, '/v1/models/gpt-4o-mini', { key });
    expect(res.status).toBe(500);
    expect(res.json.type).toMatch(/errors#VIOLATIONS$/);
    expect(res.headers.get('sl-violations')).toContain('no_such_field');
    expect(JSON.stringify(res.json.validation)).toContain('no_such_field');
  });
});
