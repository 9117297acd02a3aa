import http from 'node:http';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { naturalReply } from '../../src/sim/text.js';
import { countChatPromptTokens, countTextTokens } from '../../src/tokenize.js';

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

async function call(path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown, raw?: string) {
  const res = await request(`${sim.url}${path}`, {
    method, headers: { 'content-type': 'application/json' }, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

function parseSse(text: string) {
  const events = text.split('\n\n').filter((e) => e !== '').map((e) => e.replace(/^data: /, ''));
  return { done: events.at(-1) === '[DONE]', chunks: events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e)) };
}

const user = (content: string) => [{ role: 'user' as const, content }];
describe('chat completions (JSON)', () => {
  it('answers in the OpenAI shape with exact usage', async () => {
    const messages = user('Hi there');
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(res.id).toMatch(/^chatcmpl-sim/);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.system_fingerprint).toBeTypeOf('string');
    const choice = res.choices[0]!;
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.refusal).toBeNull();
    // A natural-length answer (issue 31 item 13), not max_tokens of filler.
    expect(choice.message.content).toBe(naturalReply('Hi there'));
    expect(choice.message.content).toMatch(/^This is a simulated reply to: Hi there\. /);
    expect(choice.finish_reason).toBe('stop');
    const completion = countTextTokens(naturalReply('Hi there'));
    expect(completion).toBeLessThan(40);
    expect(res.usage).toEqual({
      prompt_tokens: countChatPromptTokens(messages), completion_tokens: completion, total_tokens: countChatPromptTokens(messages) + completion,
      prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(sim.requests).toBe(1);
  });

  it('is deterministic', async () => {
    const body = { model: 'm', messages: user('same question') };
    const a = await client.chat.completions.create(body);
    const b = await client.chat.completions.create(body);
    expect(b.id).toBe(a.id);
    expect(b.choices).toEqual(a.choices);
    expect(b.usage).toEqual(a.usage);
  });

  it('cuts at max_tokens / max_completion_tokens, and otherwise stops by itself', async () => {
    const cut = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_tokens: 3 });
    expect(cut.choices[0]!.message.content).toBe('This is a');
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(3);
    const natural = countTextTokens(naturalReply('Hi'));
    const long = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_completion_tokens: natural });
    expect([long.usage!.completion_tokens, long.choices[0]!.finish_reason]).toEqual([natural, 'stop']);
    const short = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_completion_tokens: natural - 1 });
    expect(short.choices[0]!.finish_reason).toBe('length');
    for (const max_tokens of [4096, 100_000]) {
      const huge = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_tokens });
      expect([huge.usage!.completion_tokens, huge.choices[0]!.finish_reason]).toEqual([natural, 'stop']);
    }
  });

  it('quotes at most 200 characters of the last user message', async () => {
    const res = await client.chat.completions.create({ model: 'm', messages: user('x'.repeat(500)), max_tokens: 4000 });
    expect(res.choices[0]!.message.content).toContain(`to: ${'x'.repeat(200)}. The built-in`);
  });

  it('reports cached tokens for prompt_cache_key or a long system prompt', async () => {
    const keyed = await client.chat.completions.create({ model: 'm', messages: user('hi'), prompt_cache_key: 'k1' });
    expect(keyed.usage!.prompt_tokens_details!.cached_tokens).toBe(Math.floor(keyed.usage!.prompt_tokens / 2));
    const system = 'policy '.repeat(1100);
    const long = await client.chat.completions.create({ model: 'm', messages: [{ role: 'system', content: system }, ...user('hi')] });
    expect(long.usage!.prompt_tokens_details!.cached_tokens).toBe(Math.floor(long.usage!.prompt_tokens / 2));
  });

  it('rejects invalid requests with OpenAI errors', async () => {
    const noModel = await call('/v1/chat/completions', 'POST', { messages: user('x') });
    expect(noModel.status).toBe(400);
    expect(noModel.json.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    expect(Object.keys(noModel.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect((await call('/v1/chat/completions', 'POST', { model: 'm', messages: [] })).json.error.param).toBe('messages');
    expect((await call('/v1/chat/completions', 'POST', { model: 'm', messages: user('x'), max_tokens: 0 })).json.error.param).toBe('max_tokens');
    expect((await call('/v1/chat/completions', 'POST', undefined, '{nope')).status).toBe(400);
    await expect(client.chat.completions.create({ model: 'm', messages: [] })).rejects.toMatchObject({ status: 400 });
  });
});

describe('chat completions (stream)', () => {
  it('streams the same text as the JSON answer, without usage unless asked', async () => {
    const body = { model: 'm', messages: user('stream me') };
    const json = await client.chat.completions.create(body);
    const stream = await client.chat.completions.create({ ...body, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.usage === undefined)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(json.choices[0]!.message.content);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.length).toBe(2 + json.choices[0]!.message.content!.split(' ').length);
  });

  it('sends a final usage chunk equal to the JSON usage when include_usage', async () => {
    const body = { model: 'm', messages: user('usage please'), max_tokens: 10 };
    const json = await call('/v1/chat/completions', 'POST', body);
    const res = await call('/v1/chat/completions', 'POST', { ...body, stream: true, stream_options: { include_usage: true } });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const { done, chunks } = parseSse(res.text);
    expect(done).toBe(true);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(json.json.usage);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(json.json.choices[0].message.content);
  });
});

describe('chat completions (stream padding)', () => {
  const body = { model: 'm', messages: user('pad me'), max_tokens: 8, stream: true };

  it('ends every chunk with an obfuscation string after usage by default, as OpenAI does', async () => {
    const res = await call('/v1/chat/completions', 'POST', { ...body, stream_options: { include_usage: true } });
    const raw = res.text.split('\n\n').filter((e) => e.startsWith('data: {'));
    expect(raw.every((e) => /,"usage":(null|\{.*\}),"obfuscation":"[A-Za-z0-9]{1,16}"\}$/.test(e))).toBe(true);
    const { chunks } = parseSse(res.text);
    expect(new Set(chunks.map((c) => c.obfuscation.length)).size).toBeGreaterThan(1); // sizes vary
    // The same body streams the same bytes (the simulator answers deterministically).
    const again = await call('/v1/chat/completions', 'POST', { ...body, stream_options: { include_usage: true } });
    expect(parseSse(again.text).chunks.map((c) => c.obfuscation)).toEqual(chunks.map((c) => c.obfuscation));
  });

  it('leaves the padding out when include_obfuscation is false', async () => {
    for (const streamOptions of [{ include_obfuscation: false }, { include_usage: true, include_obfuscation: false }]) {
      const { chunks } = parseSse((await call('/v1/chat/completions', 'POST', { ...body, stream_options: streamOptions })).text);
      expect(chunks.length).toBeGreaterThan(2);
      expect(chunks.some((c) => 'obfuscation' in c)).toBe(false);
    }
  });
});

describe('control API and transport', () => {
  it('records the last request, counts requests and resets', async () => {
    await client.chat.completions.create({ model: 'gpt-x', messages: user('remember me') });
    const last = await call('/__sim/last');
    expect(last.json.headers.authorization).toBe('Bearer x');
    expect(last.json.body).toEqual({ model: 'gpt-x', messages: user('remember me') });
    expect(last.json.query).toBe('');
    expect((await call('/__sim/stats')).json.requests).toBe(1);
    await call('/__sim/reset', 'POST');
    expect(sim.requests).toBe(0);
    expect((await call('/__sim/last')).status).toBe(404);
  });

  it('lists models and 404s unknown routes', async () => {
    expect((await call('/v1/models')).json).toEqual({ object: 'list', data: [] });
    const missing = await call('/v1/chat/complete', 'POST', { model: 'm', messages: user('x') });
    expect([missing.status, missing.json.error.code]).toEqual([404, 'unknown_url']);
    // The OpenAI-compatible vendors' prefixes (issue 32): DeepSeek's bare origin, Groq's, Gemini's, OpenRouter's.
    for (const path of ['/chat/completions', '/openai/v1/chat/completions', '/v1beta/openai/chat/completions', '/api/v1/chat/completions']) {
      expect((await call(path, 'POST', { model: 'm', messages: user('x') })).status, path).toBe(200);
    }
  });

  it('applies the fixed latencyMs option to every answer', async () => {
    const slow = await startSimulator({ latencyMs: 100 });
    try {
      expect(slow.url).toBe(`http://127.0.0.1:${slow.port}`);
      const started = performance.now();
      const res = await request(`${slow.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: user('x') }) });
      await res.body.dump();
      expect([res.statusCode, slow.requests]).toEqual([200, 1]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    } finally {
      await slow.close();
    }
  });

  it('keeps connections alive', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const reused: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(`${sim.url}/v1/models`, { agent }, (res) => { res.resume(); res.on('end', resolve); });
        req.on('error', reject);
        req.end();
        reused.push(req.reusedSocket);
      });
    }
    agent.destroy();
    expect(reused).toEqual([false, true, true]);
  });

  it('survives clients that abort mid-stream', async () => {
    await call('/__sim/faults', 'POST', { fault: { chunk_delay_ms: 20, times: 1 } });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'm', messages: user('abort me'), stream: true }, { signal: controller.signal });
    let seen = 0;
    try {
      for await (const _ of stream) if (++seen === 2) controller.abort();
    } catch { /* the SDK may end the iteration or throw an abort error */ }
    expect(seen).toBeLessThan(5);
    await new Promise((r) => setTimeout(r, 100));
    const ok = await client.chat.completions.create({ model: 'm', messages: user('still alive?') });
    expect(ok.choices[0]!.finish_reason).toBe('stop');
  });
});
