/**
 * POST /v1/embeddings end to end (issue 9; spec 4.15): real HTTP through fastify and undici to the
 * simulator playing OpenAI's /v1/embeddings and Cohere's /v2/embed. Billed in the tokens the upstream
 * reports (a quantity of input tokens at the offering's input price: kind `embeddings`, unit `token`),
 * exact to the nano; every rule of the 4.15 table for the Fast and Pro offerings refused with a 400
 * naming the parameter before anything is reserved or sent upstream; over-long input refused, never
 * truncated; an upstream failure or a malformed answer charges nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/tokenize.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';

type Answer = JsonAnswer;

/** Little-endian float32 values of a base64 string (what OpenAI's `encoding_format: base64` carries). */
function decode(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}
const norm = (v: number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const tokensOf = (texts: string[]): number => texts.reduce((s, x) => s + countTextTokens(x), 0);

// Prices (providers/*.yaml), nano-USD per token: text-embedding-3-small $0.02 per 1M = 20; embed-fast
// and embed-pro $0.12 per 1M = 120. Exact: one token costs a whole number of nano-USD.
const NANO_PER_TOKEN: Record<string, bigint> = { 'text-embedding-3-small': 20n, 'embed-fast': 120n, 'embed-pro': 120n };

describeStore(`embeddings (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const embed = (key: string, body: unknown): Promise<Answer> => postJson(t, '/v1/embeddings', key, body);
  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;
  const untouched = (account: { id: string }, balanceNano: bigint): Promise<void> => expectUntouched(t, account, balanceNano);
  /** The one usage row of an account after one call, checked against the answer's usage and price. */
  const billedOnce = async (account: { id: string }, a: Answer, model: string): Promise<void> => {
    const tokens = a.json.usage.prompt_tokens as number;
    const amount = BigInt(tokens) * NANO_PER_TOKEN[model]!;
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model, requestId: r.requestId }))).toEqual([
      { kind: 'embeddings', unit: 'token', quantity: BigInt(tokens), amount, model, requestId: a.headers.get('x-request-id') },
    ]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - amount, heldNano: 0n, openHolds: 0 });
  };

  describe('OpenAI-format offerings', () => {
    it('embeds texts as OpenAI does and bills the reported prompt tokens exactly', async () => {
      const account = await t.account('1');
      const input = ['hello world', 'The quick brown fox jumps over the lazy dog'];
      const a = await embed(account.key, { model: 'text-embedding-3-small', input, user: 'u-1' });
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(a.json).toMatchObject({ object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: tokensOf(input), total_tokens: tokensOf(input) } });
      expect(a.json.data.map((d: any) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 1536], ['embedding', 1, 1536]]);
      expect(Math.abs(norm(a.json.data[0].embedding) - 1)).toBeLessThan(1e-5);
      // The request went upstream as sent (OpenAI's own wire format), under the upstream's model id.
      expect(await lastUpstream()).toMatchObject({ path: '/v1/embeddings', body: { model: 'text-embedding-3-small', input, user: 'u-1' } });
      // 11 tokens at $0.02 per 1M: 220 nano-USD.
      expect(tokensOf(input)).toBe(11);
      expect(a.headers.get('x-gateway-cost-usd')).toBe('0.00000022');
      await billedOnce(account, a, 'text-embedding-3-small');
    });

    it('takes token-id arrays and `dimensions`, and base64 decodes to the float vectors', async () => {
      const account = await t.account('1');
      const ids = { model: 'text-embedding-3-small', input: [[15339, 1917], [12194, 11, 9522]], dimensions: 256 };
      const floats = await embed(account.key, ids);
      expect(floats.status, JSON.stringify(floats.json)).toBe(200);
      expect(floats.json.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
      expect(floats.json.data.map((d: any) => d.embedding.length)).toEqual([256, 256]);
      const packed = await embed(account.key, { ...ids, encoding_format: 'base64' });
      expect(packed.status).toBe(200);
      expect(packed.json.data.map((d: any) => decode(d.embedding))).toEqual(floats.json.data.map((d: any) => d.embedding));
      const single = await embed(account.key, { model: 'text-embedding-3-small', input: [15339, 1917] });
      expect(single.json.usage.prompt_tokens).toBe(2);
      expect(single.json.data).toHaveLength(1);
      const rows = (await t.usage(account.id)).data;
      expect(rows.map((r) => [r.quantity, r.amountNano]).sort()).toEqual([[2n, 40n], [5n, 100n], [5n, 100n]]);
    });
  });

  describe('the Fast and Pro offerings (Cohere /v2/embed)', () => {
    it('sends texts as documents, never truncated, at 1536 dimensions by default, and bills the billed tokens exactly', async () => {
      const account = await t.account('1');
      const input = ['hello world', 'goodbye, cruel world'];
      const a = await embed(account.key, { model: 'embed-pro', input });
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(a.json).toMatchObject({ object: 'list', model: 'embed-pro', usage: { prompt_tokens: tokensOf(input), total_tokens: tokensOf(input) } });
      expect(a.json.data.map((d: any) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 1536], ['embedding', 1, 1536]]);
      expect(await lastUpstream()).toEqual({
        path: '/v2/embed', query: '', headers: expect.anything(),
        body: { model: 'embed-v4.0', texts: input, input_type: 'search_document', embedding_types: ['float'], output_dimension: 1536, truncate: 'NONE' },
      });
      await billedOnce(account, a, 'embed-pro');
    });

    it('embed-fast takes one text, and base64 decodes to the float vector', async () => {
      const account = await t.account('1');
      const floats = await embed(account.key, { model: 'embed-fast', input: 'Ship it', encoding_format: 'float' });
      expect(floats.status, JSON.stringify(floats.json)).toBe(200);
      await billedOnce(account, floats, 'embed-fast');
      const packed = await embed(account.key, { model: 'embed-fast', input: 'Ship it', encoding_format: 'base64' });
      expect((await lastUpstream()).body.embedding_types).toEqual(['base64']);
      expect(typeof packed.json.data[0].embedding).toBe('string');
      expect(decode(packed.json.data[0].embedding)).toEqual(floats.json.data[0].embedding);
      expect(packed.json.usage).toEqual(floats.json.usage);
    });

    it('serves each dimension of the 4.15 table: 256, 512, 1024, 1536 natively, 768 as the 1024 embedding shortened, 2048 as the 1536 one padded', async () => {
      const account = await t.account('1');
      for (const dimensions of [256, 512, 1024, 1536]) {
        const a = await embed(account.key, { model: 'embed-pro', input: 'hello world', dimensions });
        expect(a.status, JSON.stringify(a.json)).toBe(200);
        expect(a.json.data[0].embedding).toHaveLength(dimensions);
        expect((await lastUpstream()).body.output_dimension).toBe(dimensions);
      }
      /** The embedding at `dimensions` in `encoding_format`, checked to be asked upstream at `upstream`. */
      const resized = async (dimensions: number, upstream: number, encoding_format: 'float' | 'base64'): Promise<number[]> => {
        const a = await embed(account.key, { model: 'embed-pro', input: 'hello world', dimensions, encoding_format });
        expect(a.status, JSON.stringify(a.json)).toBe(200);
        expect((await lastUpstream()).body.output_dimension).toBe(upstream);
        const vector = encoding_format === 'base64' ? decode(a.json.data[0].embedding) : a.json.data[0].embedding as number[];
        expect(vector).toHaveLength(dimensions);
        return vector;
      };
      const full = (await embed(account.key, { model: 'embed-pro', input: 'hello world', dimensions: 1024 })).json.data[0].embedding as number[];
      for (const encoding_format of ['float', 'base64'] as const) {
        const vector = await resized(768, 1024, encoding_format);
        expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-6);
        const head = full.slice(0, 768);
        vector.forEach((v, i) => expect(Math.abs(v - head[i]! / norm(head))).toBeLessThan(1e-7));
      }
      // 2048: embed-v4.0 tops out at 1536, so the 1536 embedding followed by 512 zeros (same similarities, unit length).
      const native = (await embed(account.key, { model: 'embed-pro', input: 'hello world', dimensions: 1536 })).json.data[0].embedding as number[];
      for (const encoding_format of ['float', 'base64'] as const) {
        const vector = await resized(2048, 1536, encoding_format);
        expect(vector.slice(0, 1536)).toEqual(native);
        expect(vector.slice(1536)).toEqual(Array(512).fill(0));
      }
    });

    it('takes 96 texts, and bills them in one row', async () => {
      const account = await t.account('1');
      const input = Array.from({ length: 96 }, (_, i) => `text number ${i}`);
      const a = await embed(account.key, { model: 'embed-pro', input });
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(a.json.data.map((d: any) => d.index)).toEqual(input.map((_, i) => i));
      expect(a.json.usage.prompt_tokens).toBe(tokensOf(input));
      await billedOnce(account, a, 'embed-pro');
    });
  });

  it('refuses every input the 4.15 table does not allow with a 400 naming the parameter, before anything is reserved or sent', async () => {
    const account = await t.account('1');
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const pro = (extra: Record<string, unknown>) => ({ model: 'embed-pro', input: 'hello', ...extra });
    const cases: Array<[unknown, string, string]> = [
      [pro({ input: '' }), 'input', 'invalid_request'],
      [pro({ input: [] }), 'input', 'invalid_request'],
      [pro({ input: ['ok', ''] }), 'input.1', 'invalid_request'],
      [pro({ input: Array.from({ length: 97 }, () => 'x') }), 'input', 'invalid_request'],
      [pro({ input: 42 }), 'input', 'invalid_request'],
      [pro({ input: [15339, 1917] }), 'input', 'unsupported_parameter'],
      [pro({ input: [[15339], [1917]] }), 'input', 'unsupported_parameter'],
      [pro({ input: png }), 'input', 'unsupported_parameter'],
      [pro({ input: [png] }), 'input', 'unsupported_parameter'],
      [pro({ input: ['a cat', png] }), 'input', 'unsupported_parameter'],
      [pro({ input: [{ type: 'image_url', image_url: { url: png } }] }), 'input.0', 'invalid_request'],
      [pro({ input: ['a cat', { image: png }] }), 'input.1', 'invalid_request'],
      [pro({ images: [png] }), 'images', 'invalid_request'],
      [pro({ dimensions: 300 }), 'dimensions', 'invalid_request'],
      [pro({ dimensions: 3072 }), 'dimensions', 'invalid_request'],
      [pro({ dimensions: '256' }), 'dimensions', 'invalid_request'],
      [pro({ dimensions: 0 }), 'dimensions', 'invalid_request'],
      [pro({ encoding_format: 'int8' }), 'encoding_format', 'invalid_request'],
      [pro({ input_type: 'search_query' }), 'input_type', 'unsupported_parameter'],
      [pro({ truncate: 'END' }), 'truncate', 'unsupported_parameter'],
      [pro({ truncate: 'NONE' }), 'truncate', 'unsupported_parameter'],
      [{ input: 'hello' }, 'model', 'invalid_request'],
      [{ model: 'embed-pro' }, 'input', 'invalid_request'],
      // OpenAI-format offerings take token arrays, but not Cohere's native parameters nor mixed lists.
      [{ model: 'text-embedding-3-small', input: 'hi', input_type: 'search_document' }, 'input_type', 'unsupported_parameter'],
      [{ model: 'text-embedding-3-small', input: 'hi', truncate: 'END' }, 'truncate', 'unsupported_parameter'],
      [{ model: 'text-embedding-3-small', input: ['hi', 15339] }, 'input', 'invalid_request'],
      [{ model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'x') }, 'input', 'invalid_request'],
    ];
    const upstreamBefore = t.sim.requests;
    for (const [body, param, code] of cases) {
      const a = await embed(account.key, body);
      const label = JSON.stringify(body).slice(0, 100);
      expect(a.status, label).toBe(400);
      expect(a.json.error.param, `${label}: ${JSON.stringify(a.json)}`).toBe(param);
      expect(a.json.error.code, `${label}: ${JSON.stringify(a.json)}`).toBe(code);
    }
    const chatModel = await embed(account.key, { model: 'gpt-4o-mini', input: 'hi' });
    expect(chatModel.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    const unknown = await embed(account.key, { model: 'embed-nope', input: 'hi' });
    expect(unknown.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(t.sim.requests).toBe(upstreamBefore);
    await untouched(account, 1_000_000_000n);
  });

  it('refuses over-long input instead of truncating it, and charges nothing', async () => {
    const account = await t.account('1');
    // embed-v4.0 takes 128,000 tokens per text; " hello" is one o200k token (as the simulator counts).
    const long = `hello${' hello'.repeat(130_000)}`;
    const cohere = await embed(account.key, { model: 'embed-pro', input: ['short', long] });
    expect(cohere.status, JSON.stringify(cohere.json).slice(0, 300)).toBe(400);
    expect(cohere.json.error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(cohere.json.error.message).toMatch(/more than the maximum of 128000/);
    expect((await lastUpstream()).body.truncate).toBe('NONE');
    // text-embedding-3-small takes 8192 tokens per input.
    const openai = await embed(account.key, { model: 'text-embedding-3-small', input: `hello${' hello'.repeat(9000)}` });
    expect(openai.status).toBe(400);
    // OpenAI's own code for it (issue 29: a context_window_fallbacks model may serve it).
    expect(openai.json.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect(openai.json.error.message).toMatch(/maximum context length is 8192 tokens/);
    await untouched(account, 1_000_000_000n);
  });

  it('charges nothing when the upstream fails, answers malformed or without its token count; 402 when the input does not fit', async () => {
    const account = await t.account('1');
    for (const model of ['embed-pro', 'text-embedding-3-small']) {
      // Each fault on every attempt of the request (its retries included, issue 29), then cleared.
      for (const fault of [{ status: 500 }, { status: 503 }, { error_after_chunks: 1 }, { omit_usage: true }]) {
        await t.fault(fault);
        const a = await embed(account.key, { model, input: ['hello world'] });
        await t.clearFaults();
        expect(a.status, `${model} ${JSON.stringify(fault)}: ${JSON.stringify(a.json)}`).toBe(502);
        expect(a.json.error.code).toBe('upstream_error');
      }
      await t.fault({ status: 429 });
      expect((await embed(account.key, { model, input: 'hi' })).status).toBe(429);
      await t.clearFaults();
    }
    await untouched(account, 1_000_000_000n);

    // Thousands of tokens at $0.12 per 1M: more than the $0.0001 the account has.
    const poor = await t.account('0.0001');
    const refused = await embed(poor.key, { model: 'embed-pro', input: Array.from({ length: 2 }, () => 'hello world'.repeat(2000)) });
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('insufficient_balance');
    expect(refused.json.error.message).toMatch(/^Insufficient balance: this request needs \$0\.\d+ reserved \(\d+ tokens at \$0\.12 per 1000000\); \$0\.0001 is available\. Top up\.$/);
    await untouched(poor, 100_000n);
  });

  it('lists the embedding offerings under service_type=embedding, and the catalogue prices them per token', async () => {
    const account = await t.account('0');
    const list = async (query: string) => ((await (await fetch(`${t.url}/v1/models${query}`, { headers: { authorization: `Bearer ${account.key}` } })).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
    expect((await list('?service_type=embedding')).sort()).toEqual(['embed-fast', 'embed-pro', 'text-embedding-3-large', 'text-embedding-3-small']);
    expect(await list('?service_type=EMBEDDING')).toContain('embed-pro');
    expect(await list('')).not.toContain('embed-pro');
    const catalog = (await (await fetch(`${t.url}/api/public/catalog`)).json()) as { data: Array<Record<string, unknown>> };
    expect(catalog.data.find((o) => o.id === 'embed-pro')).toMatchObject({
      provider: 'cohere', service_type: 'EMBEDDING', availability: 'available', context_window: 128000,
      billing: { unit: 'token', per: 1000000, prices: { input: '0.12' } },
    });
    expect(catalog.data.find((o) => o.id === 'embed-fast')).toMatchObject({ service_type: 'EMBEDDING', billing: { unit: 'token', prices: { input: '0.12' } } });
    expect(catalog.data.find((o) => o.id === 'text-embedding-3-small')).toMatchObject({
      provider: 'openai', service_type: 'EMBEDDING', context_window: 8192, billing: { unit: 'token', per: 1000000, prices: { input: '0.02' } },
    });
  });
});
