/**
 * The simulator's OpenAI `POST /v1/embeddings` (src/sim/openai-embeddings.ts): deterministic unit
 * vectors per input, the same float32 values as numbers or base64, `dimensions` shortening as OpenAI
 * does, `usage.prompt_tokens` from the tokenizer (token-id arrays by their ids), OpenAI-shaped errors,
 * and the faults every JSON route takes.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { countTextTokens } from '../../src/tokenize.js';
import { simCall } from './helpers.js';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const embed = (body: unknown) => simCall(sim.url, '/v1/embeddings', 'POST', body);
const decode = (b64: string): number[] => { const buf = Buffer.from(b64, 'base64'); return Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4)); };
const norm = (v: number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const addFault = async (fault: SimFault) => {
  const res = await request(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault }) });
  await res.body.dump();
};

describe('OpenAI POST /v1/embeddings (simulator)', () => {
  it('answers one unit vector per input, in order, with the prompt tokens of the texts', async () => {
    const input = ['hello world', 'The quick brown fox'];
    const res = await embed({ model: 'text-embedding-3-small', input });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ object: 'list', model: 'text-embedding-3-small' });
    const tokens = countTextTokens(input[0]!) + countTextTokens(input[1]!);
    expect(res.json.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(res.json.data.map((d: any) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 1536], ['embedding', 1, 1536]]);
    expect(norm(res.json.data[0].embedding)).toBeCloseTo(1, 5);
    // Deterministic, and different per input.
    expect((await embed({ model: 'text-embedding-3-small', input: 'hello world' })).json.data[0].embedding).toEqual(res.json.data[0].embedding);
    expect(res.json.data[1].embedding).not.toEqual(res.json.data[0].embedding);
    expect((await embed({ model: 'text-embedding-3-large', input: 'x' })).json.data[0].embedding).toHaveLength(3072);
  });

  it('base64 is the little-endian float32 bytes of the float answer; dimensions shortens and renormalises', async () => {
    const floats = await embed({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float' });
    const packed = await embed({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'base64' });
    expect(decode(packed.json.data[0].embedding)).toEqual(floats.json.data[0].embedding);
    const short = await embed({ model: 'text-embedding-3-small', input: 'hello', dimensions: 64 });
    const vector = short.json.data[0].embedding as number[];
    expect(vector).toHaveLength(64);
    expect(norm(vector)).toBeCloseTo(1, 5);
    const head = (floats.json.data[0].embedding as number[]).slice(0, 64);
    vector.forEach((v, i) => expect(v).toBeCloseTo(head[i]! / norm(head), 6));
  });

  it('takes token-id arrays and counts their ids', async () => {
    const res = await embed({ model: 'text-embedding-3-small', input: [[1, 2, 3], [4]] });
    expect(res.status, res.text).toBe(200);
    expect(res.json.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect((await embed({ model: 'text-embedding-3-small', input: [1, 2, 3] })).json.data).toHaveLength(1);
  });

  it('refuses what OpenAI refuses, in its error shape', async () => {
    const cases: Array<[unknown, number, string | null, RegExp]> = [
      [{ model: 'nope', input: 'x' }, 404, 'model', /does not exist/],
      [{ input: 'x' }, 400, 'model', /model/],
      [{ model: 'text-embedding-3-small', input: '' }, 400, 'input', /empty string/],
      [{ model: 'text-embedding-3-small', input: [] }, 400, 'input', /input/],
      [{ model: 'text-embedding-3-small', input: ['a', 1] }, 400, 'input', /input/],
      [{ model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'x') }, 400, 'input', /at most 2048/],
      [{ model: 'text-embedding-3-small', input: `a${' a'.repeat(8192)}` }, 400, 'input', /maximum context length is 8192 tokens, however you requested 8193 tokens/],
      [{ model: 'text-embedding-3-small', input: 'x', dimensions: 1537 }, 400, 'dimensions', /1 to 1536/],
      [{ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 }, 400, 'dimensions', /does not support/],
      [{ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' }, 400, 'encoding_format', /float/],
      [{ model: 'text-embedding-3-small', input: 'x', input_type: 'query' }, 400, 'input_type', /Unrecognized request argument/],
    ];
    for (const [body, status, param, message] of cases) {
      const res = await embed(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param });
      expect(res.json.error.message).toMatch(message);
    }
    expect((await embed({ model: 'text-embedding-3-small', input: `a${' a'.repeat(8191)}` })).status).toBe(200);
  });

  it('applies faults: a status, a missing usage, a body cut short', async () => {
    await addFault({ status: 503, times: 1 });
    const failed = await embed({ model: 'text-embedding-3-small', input: 'x' });
    expect(failed.status).toBe(503);
    expect(failed.json.error.type).toBe('server_error');
    await addFault({ omit_usage: true, times: 1 });
    const bare = await embed({ model: 'text-embedding-3-small', input: 'x' });
    expect(bare.status).toBe(200);
    expect(bare.json.usage).toBeUndefined();
    await addFault({ error_after_chunks: 1, times: 1 });
    const res = await request(`${sim.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x' }) });
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    expect(text.startsWith('{"object":"list"')).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
  });
});
