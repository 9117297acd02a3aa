/**
 * The official openai SDK's `embeddings.create` against the gateway, unchanged, on an OpenAI-format
 * offering and on the Fast and Pro offerings (Cohere /v2/embed): by default it asks for base64 and
 * decodes it to float32 numbers, which must equal the float answer for the same input; billing exact.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// nano-USD per input token (providers/*.yaml): $0.02 and $0.12 per 1M tokens.
const NANO_PER_TOKEN: Record<string, bigint> = { 'text-embedding-3-small': 20n, 'embed-fast': 120n, 'embed-pro': 120n };

describeStore('openai SDK embeddings against the gateway', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const lastUpstreamBody = async (): Promise<any> => ((await (await fetch(`${t.sim.url}/__sim/last`)).json()) as { body: unknown }).body;

  for (const model of ['text-embedding-3-small', 'embed-fast', 'embed-pro']) {
    it(`${model}: the default (base64, decoded by the SDK) equals the float answer, and each call is billed exactly`, async () => {
      const input = ['The quick brown fox', 'jumps over the lazy dog'];
      const before = (await t.settled(account.id))!.balanceNano;
      const decoded = await client.embeddings.create({ model, input });
      // The SDK asked for base64 on the wire; the upstream was asked for the same encoding.
      const upstream = await lastUpstreamBody();
      expect(model.startsWith('embed-') ? upstream.embedding_types : upstream.encoding_format).toEqual(model.startsWith('embed-') ? ['base64'] : 'base64');
      const floats = await client.embeddings.create({ model, input, encoding_format: 'float' });
      expect(decoded.object).toBe('list');
      expect(decoded.model).toBe(model);
      expect(decoded.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 1536], ['embedding', 1, 1536]]);
      expect(decoded.data.map((d) => d.embedding)).toEqual(floats.data.map((d) => d.embedding));
      expect(decoded.usage).toEqual(floats.usage);
      expect(decoded.usage.total_tokens).toBe(decoded.usage.prompt_tokens);
      const after = (await t.settled(account.id))!;
      expect(before - after.balanceNano).toBe(2n * BigInt(decoded.usage.prompt_tokens) * NANO_PER_TOKEN[model]!);
      expect(after.openHolds).toBe(0);
      const rows = (await t.usage(account.id, { limit: 2 })).data;
      expect(rows.map((r) => [r.kind, r.unit, r.model, r.quantity])).toEqual(Array(2).fill(['embeddings', 'token', model, BigInt(decoded.usage.prompt_tokens)]));
    });
  }

  it('takes `dimensions` and a single text', async () => {
    const small = await client.embeddings.create({ model: 'embed-pro', input: 'hello', dimensions: 256 });
    expect(small.data).toHaveLength(1);
    expect(small.data[0]!.embedding).toHaveLength(256);
    const shortened = await client.embeddings.create({ model: 'embed-pro', input: 'hello', dimensions: 768 });
    expect(shortened.data[0]!.embedding).toHaveLength(768);
    const openai = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello', dimensions: 64 });
    expect(openai.data[0]!.embedding).toHaveLength(64);
  });

  // embed-v4.0 tops out at 1536 (providers/cohere.yaml): 2048 (spec 4.15) is the 1536 embedding and 512
  // zeros. The simulator's vectors are deterministic per model, text and dimension, so the two calls compare.
  it('embed-fast at dimensions 2048: the 1536 embedding followed by 512 zeros, decoded by the SDK, billed as 1536', async () => {
    const before = (await t.settled(account.id))!.balanceNano;
    const padded = await client.embeddings.create({ model: 'embed-fast', input: 'x', dimensions: 2048 });
    expect(await lastUpstreamBody()).toMatchObject({ model: 'embed-v4.0', embedding_types: ['base64'], output_dimension: 1536 });
    const middle = (await t.settled(account.id))!.balanceNano;
    const native = await client.embeddings.create({ model: 'embed-fast', input: 'x', dimensions: 1536 });
    const after = (await t.settled(account.id))!;
    const vector = padded.data[0]!.embedding;
    expect(vector).toHaveLength(2048);
    expect(vector.slice(1536)).toEqual(Array(512).fill(0));
    expect(vector.slice(0, 1536)).toEqual(native.data[0]!.embedding);
    expect(Math.abs(Math.hypot(...vector) - 1)).toBeLessThan(1e-6);
    expect(padded.usage).toEqual(native.usage);
    expect(before - middle).toBe(middle - after.balanceNano);
    expect(before - middle).toBe(BigInt(padded.usage.prompt_tokens) * NANO_PER_TOKEN['embed-fast']!);
    expect(after.openHolds).toBe(0);
    const rows = (await t.usage(account.id, { limit: 2 })).data;
    expect(rows.map((r) => [r.kind, r.unit, r.model, r.quantity, r.amountNano])).toEqual(Array(2).fill(['embeddings', 'token', 'embed-fast', BigInt(padded.usage.prompt_tokens), before - middle]));
  });

  it('surfaces a refused parameter as a BadRequestError naming it', async () => {
    const error = await client.embeddings.create({ model: 'embed-pro', input: 'hello', dimensions: 3072 }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('dimensions');
    const tokens = await client.embeddings.create({ model: 'embed-fast', input: [15339, 1917] }).then(() => null, (e: unknown) => e);
    expect((tokens as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input');
  });
});
