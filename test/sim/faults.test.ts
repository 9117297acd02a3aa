import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

async function call(path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown) {
  const res = await request(`${sim.url}${path}`, {
    method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** Streams a chat request and keeps whatever arrived, even when the connection breaks. */
async function streamRaw(model: string, includeUsage: boolean) {
  const res = await request(`${sim.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'faulty?' }], stream: true, stream_options: { include_usage: includeUsage } }),
  });
  const parts: Buffer[] = [];
  let broken = false;
  try { for await (const part of res.body) parts.push(part as Buffer); } catch { broken = true; }
  const events = Buffer.concat(parts).toString('utf8').split('\n\n').filter((e) => e !== '').map((e) => e.replace(/^data: /, ''));
  const done = events.at(-1) === '[DONE]';
  const data = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
  return { status: res.statusCode, broken, done, data };
}

const addFault = (fault: SimFault, model?: string) => call('/__sim/faults', 'POST', { model, fault });
const chat = (model = 'm') => call('/v1/chat/completions', 'POST', { model, messages: [{ role: 'user', content: 'hi' }] });

describe('status faults', () => {
  it('answers 5xx with a server_error body', async () => {
    await addFault({ status: 503 });
    const res = await chat();
    expect(res.status).toBe(503);
    expect(res.json.error).toMatchObject({ type: 'server_error' });
    expect(Object.keys(res.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  });

  it('answers 429 with retry-after and a rate-limit error the SDK understands', async () => {
    await addFault({ status: 429 });
    const res = await chat();
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('applies a fault `times` times, then answers normally', async () => {
    const added = await addFault({ status: 500, times: 2 });
    expect(added.json).toMatchObject({ model: null, remaining: 2, fault: { status: 500, times: 2 } });
    expect((await chat()).status).toBe(500);
    expect((await call('/__sim/faults')).json.data[0].remaining).toBe(1);
    expect((await chat()).status).toBe(500);
    expect((await call('/__sim/faults')).json.data).toEqual([]);
    expect((await chat()).status).toBe(200);
  });

  it('scopes faults to a model', async () => {
    await addFault({ status: 500 }, 'bad-model');
    expect((await chat('good-model')).status).toBe(200);
    expect((await chat('bad-model')).status).toBe(500);
    expect((await chat('bad-model')).status).toBe(500);
    expect((await call('/__sim/faults', 'DELETE')).json).toEqual({ deleted: 1 });
    expect((await chat('bad-model')).status).toBe(200);
  });

  it('rejects malformed faults', async () => {
    expect((await addFault({ status: 200 })).status).toBe(400);
    expect((await addFault({ latency_ms: -1 })).status).toBe(400);
    expect((await call('/__sim/faults', 'POST', { fault: { statsu: 500 } })).status).toBe(400);
    expect((await call('/__sim/faults', 'POST', { fault: { hold_last_chunk: 1 } })).json.error.message).toBe('fault.hold_last_chunk must be a boolean');
  });
});

describe('latency and usage faults', () => {
  it('delays the answer by latency_ms', async () => {
    await addFault({ latency_ms: 150, times: 1 });
    const started = performance.now();
    expect((await chat()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect((await call('/__sim/faults')).json.data).toEqual([]);
  });

  it('omits usage from JSON and from streams', async () => {
    await addFault({ omit_usage: true });
    const json = await chat();
    expect(json.status).toBe(200);
    expect(json.json).not.toHaveProperty('usage');
    const stream = await streamRaw('m', true);
    expect(stream.done).toBe(true);
    expect(stream.data.some((c) => c.usage)).toBe(false);
    expect(stream.data.at(-1).choices[0].finish_reason).toBe('stop');
  });
});

describe('stream faults', () => {
  it('truncates the stream after N chunks without [DONE] or usage', async () => {
    await addFault({ truncate_after_chunks: 3 });
    const res = await streamRaw('m', true);
    expect(res.status).toBe(200);
    expect(res.broken).toBe(true);
    expect(res.done).toBe(false);
    expect(res.data).toHaveLength(3);
    expect(res.data.some((c) => c.usage)).toBe(false);
  });

  it('sends an error event after N chunks and ends the response', async () => {
    await addFault({ error_after_chunks: 2 });
    const res = await streamRaw('m', true);
    expect([res.status, res.broken, res.done]).toEqual([200, false, false]);
    expect(res.data).toHaveLength(3);
    expect(res.data[2]).toEqual({ error: { message: 'simulated upstream error', type: 'server_error', code: 'upstream_error' } });
  });

  it('sends an error-only stream for error_after_chunks 0, which the SDK raises', async () => {
    await addFault({ error_after_chunks: 0, times: 2 });
    const res = await streamRaw('m', false);
    expect(res.data).toEqual([{ error: { message: 'simulated upstream error', type: 'server_error', code: 'upstream_error' } }]);
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
    await expect((async () => { for await (const _ of stream) { /* drain */ } })()).rejects.toThrow(/simulated upstream error/);
  });

  it('ignores stream-only faults for JSON requests but still counts them', async () => {
    await addFault({ truncate_after_chunks: 1, times: 1 });
    expect((await chat()).status).toBe(200);
    expect((await streamRaw('m', false)).done).toBe(true);
  });
});
