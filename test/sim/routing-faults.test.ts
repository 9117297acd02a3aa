/**
 * The simulator faults the retry / fail-over scenarios use (issue 29), each through real HTTP: retry
 * headers, vendor error codes, time windows, resets, slow first events, stalls, malformed events, missing
 * terminators, prefill refusal and continuation, credential scoping, the request log and sized answers.
 */
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countMessagesInputTokens } from '../../src/sim/messages.js';
import { RequestLog } from '../../src/sim/request-log.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { naturalReply, splitWords } from '../../src/sim/text.js';
import { countTextTokens } from '../../src/tokenize.js';
import { parseNamedSse, simCall, streamNamed } from './helpers.js';

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'sk-a', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await simCall(sim.url, '/__sim/reset', 'POST'); });

const ANTHROPIC = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-a' };
const addFault = (fault: SimFault, scope: { model?: string; key?: string } = {}) => simCall(sim.url, '/__sim/faults', 'POST', { ...scope, fault });
const user = (content: string) => [{ role: 'user' as const, content }];
const chatBody = (extra: object = {}) => ({ model: 'm', messages: user('hi'), ...extra });
const chat = (extra: object = {}, headers: Record<string, string> = {}) => simCall(sim.url, '/v1/chat/completions', 'POST', chatBody(extra), headers);
const messages = (body: object, headers: Record<string, string> = {}) => simCall(sim.url, '/v1/messages', 'POST', body, { ...ANTHROPIC, ...headers });
const responses = (extra: object = {}) => simCall(sim.url, '/v1/responses', 'POST', { model: 'm', input: 'hi', ...extra });
const chatText = (text: string) => text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
const deltas = (chunks: any[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').filter((t) => t !== '');

/** Streams a POST and notes when the headers and each complete event arrived (ms since the start); `abortAfter` events, then aborts. */
async function timedStream(path: string, body: unknown, headers: Record<string, string> = {}, abortAfter?: number) {
  const started = performance.now();
  const controller = new AbortController();
  const res = await request(`${sim.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: controller.signal,
  });
  const headersAt = performance.now() - started;
  const events: { at: number; text: string }[] = [];
  let buffer = '';
  try {
    for await (const part of res.body) {
      buffer += (part as Buffer).toString('utf8');
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        events.push({ at: performance.now() - started, text: buffer.slice(0, cut) });
        buffer = buffer.slice(cut + 2);
      }
      if (abortAfter !== undefined && events.length >= abortAfter) { controller.abort(); break; }
    }
  } catch { /* aborted or cut */ }
  return { status: res.statusCode, headersAt, events };
}

/** Polls until `check` holds (the simulator's side of a disconnect is asynchronous). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('status faults: retry headers and vendor error codes', () => {
  it('sends Retry-After and retry-after-ms as asked, in every format', async () => {
    await addFault({ status: 429, retry_after_seconds: 2, times: 1 });
    const seconds = await chat();
    expect([seconds.status, seconds.headers['retry-after'], seconds.headers['retry-after-ms']]).toEqual([429, '2', undefined]);
    await addFault({ status: 503, retry_after_seconds: 1, retry_after_ms: 1500, times: 1 });
    const both = await messages({ model: 'm', max_tokens: 5, messages: user('hi') });
    expect([both.status, both.headers['retry-after'], both.headers['retry-after-ms'], both.json.type]).toEqual([503, '1', '1500', 'error']);
    await addFault({ status: 429, retry_after_ms: 250, times: 1 });
    const ms = await responses();
    expect([ms.status, ms.headers['retry-after-ms']]).toEqual([429, '250']);
  });

  it('answers a 429 without any Retry-After with omit_retry_after', async () => {
    await addFault({ status: 429, omit_retry_after: true });
    const res = await chat();
    expect(res.status).toBe(429);
    expect(res.headers).not.toHaveProperty('retry-after');
    expect(res.headers).not.toHaveProperty('retry-after-ms');
  });

  it('answers context_length_exceeded and content_policy_violation in the OpenAI shape', async () => {
    await addFault({ status: 400, error_code: 'context_length_exceeded', times: 2 });
    const context = {
      error: {
        message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded',
      },
    };
    expect(await chat()).toMatchObject({ status: 400, json: context });
    expect(await responses()).toMatchObject({ status: 400, json: context });
    await addFault({ status: 400, error_code: 'content_policy_violation', times: 1 });
    const err = await client.chat.completions.create(chatBody()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
      message: 'Your request was rejected as a result of our safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation',
    });
  });

  it('answers them in the Anthropic shape on messages', async () => {
    await addFault({ status: 400, error_code: 'context_length_exceeded', times: 1 });
    await addFault({ status: 400, error_code: 'content_policy_violation', times: 1 });
    const body = { model: 'm', max_tokens: 5, messages: user('hi') };
    const context = await messages(body);
    expect(context.status).toBe(400);
    expect(context.json).toEqual({
      type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' }, request_id: expect.stringMatching(/^req_sim/),
    });
    expect((await messages(body)).json.error).toEqual({ type: 'invalid_request_error', message: 'Output blocked by content filtering policy' });
  });
});

describe('fault windows, resets and silence', () => {
  it('applies active_for_ms only to requests within the window, then drops the fault', async () => {
    const added = await addFault({ status: 503, active_for_ms: 300 });
    expect(added.json.expires_at_ms).toBeGreaterThan(Date.now());
    expect((await chat()).status).toBe(503);
    expect((await chat()).status).toBe(503);
    await new Promise((r) => setTimeout(r, 350));
    expect((await chat()).status).toBe(200);
    expect((await simCall(sim.url, '/__sim/faults')).json.data).toEqual([]);
  });

  it('resets the connection before any headers', async () => {
    await addFault({ reset_before_headers: true, times: 2 });
    const raw = await request(`${sim.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chatBody()) }).catch((e: unknown) => e);
    expect(raw).toBeInstanceOf(Error);
    expect(String((raw as Error & { code?: string }).code)).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
    await expect(client.chat.completions.create(chatBody())).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    expect((await chat()).status).toBe(200);
    const log = (await simCall(sim.url, '/__sim/requests')).json.data;
    expect(log.map((r: any) => r.status)).toEqual([null, null, 200]);
  });

  it('cancels a long latency_ms when the client goes away', async () => {
    await addFault({ latency_ms: 600_000, times: 1 });
    const controller = new AbortController();
    const pending = request(`${sim.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chatBody()), signal: controller.signal }).catch(() => 'aborted');
    expect(await eventually(async () => (await simCall(sim.url, '/__sim/stats')).json.sleeping === 1)).toBe(true);
    controller.abort();
    expect(await pending).toBe('aborted');
    expect(await eventually(async () => (await simCall(sim.url, '/__sim/stats')).json.sleeping === 0)).toBe(true);
  });
});

describe('stream timing faults', () => {
  it('sends headers at once and the first event after first_event_delay_ms', async () => {
    await addFault({ first_event_delay_ms: 600, times: 1 });
    const res = await timedStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.events[0]!.at - res.headersAt).toBeGreaterThanOrEqual(540);
    expect(res.events.at(-1)!.text).toBe('data: [DONE]');
  });

  it('stalls after N events for stall_ms, then goes on to the end', async () => {
    await addFault({ stall_after_chunks: 5, stall_ms: 500, times: 1 });
    const body = { model: 'm', max_tokens: 12, messages: user('hi'), stream: true };
    const res = await timedStream('/v1/messages', body, ANTHROPIC);
    const normal = await streamNamed(sim.url, '/v1/messages', body, ANTHROPIC);
    expect(res.events.map((e) => e.text)).toEqual(normal.text.split('\n\n').filter((e) => e !== ''));
    expect(res.events[5]!.at - res.events[4]!.at).toBeGreaterThanOrEqual(450);
  });

  it('hangs on a huge stall_ms until the client goes, and the sleep is cancelled', async () => {
    await addFault({ stall_after_chunks: 3, stall_ms: 2_000_000_000, times: 1 });
    const res = await timedStream('/v1/chat/completions', chatBody({ stream: true }), {}, 3);
    expect(res.events).toHaveLength(3);
    expect(await eventually(async () => (await simCall(sim.url, '/__sim/stats')).json.sleeping === 0)).toBe(true);
    expect((await chat()).status).toBe(200);
  });

  it('ends a hung stream when the simulator closes', async () => {
    const other = await startSimulator();
    await simCall(other.url, '/__sim/faults', 'POST', { fault: { stall_after_chunks: 1, stall_ms: 2_000_000_000 } });
    const res = await request(`${other.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chatBody({ stream: true })) });
    const reading = res.body.text().catch(() => 'cut');
    await other.close();
    await reading; // ends (cut or short) instead of hanging
  });

  it('rejects a timer beyond what Node honours and a stall without its length', async () => {
    expect((await addFault({ stall_ms: 2 ** 31 })).json.error.message).toBe('fault.stall_ms must be at most 2147483647 (about 24.8 days)');
    expect((await addFault({ stall_after_chunks: 2 })).json.error.message).toBe('fault.stall_after_chunks and fault.stall_ms go together');
    expect((await addFault({ error_code: 'context_length_exceeded' })).json.error.message).toBe('fault.error_code needs fault.status');
    expect((await addFault({ status: 400, error_code: 'nope' as never })).json.error.message)
      .toBe('fault.error_code must be one of context_length_exceeded, content_policy_violation');
    expect((await addFault({ active_for_ms: 0 })).json.error.message).toBe('fault.active_for_ms must be a positive integer');
    expect((await addFault({ status: 429, omit_retry_after: true, retry_after_seconds: 1 })).status).toBe(400);
    expect((await simCall(sim.url, '/__sim/faults', 'POST', { key: 7, fault: {} })).json.error.message).toBe('key must be a string');
  });
});

describe('stream content faults', () => {
  it('writes one malformed event after N events, then the rest of the stream', async () => {
    const body = chatBody({ stream: true, max_tokens: 8 });
    const normal = (await simCall(sim.url, '/v1/chat/completions', 'POST', body)).text;
    await addFault({ malformed_after_chunks: 3, times: 1 });
    const broken = (await simCall(sim.url, '/v1/chat/completions', 'POST', body)).text;
    const frames = normal.split('\n\n');
    expect(broken).toBe([...frames.slice(0, 3), 'data: {"choices":[{"delta":{"content": oops', ...frames.slice(3)].join('\n\n'));
    expect(() => JSON.parse('{"choices":[{"delta":{"content": oops')).toThrow();
  });

  it('names the malformed event as a text delta on messages and responses', async () => {
    await addFault({ malformed_after_chunks: 4, times: 2 });
    const m = (await messages({ model: 'm', max_tokens: 6, messages: user('hi'), stream: true })).text.split('\n\n');
    expect(m[4]).toBe('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text": oops');
    expect(m.at(-2)).toMatch(/^event: message_stop/);
    const r = (await responses({ stream: true, max_output_tokens: 64 })).text.split('\n\n');
    expect(r[4]).toBe('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta": oops');
    expect(r.at(-2)).toMatch(/^event: response\.completed/);
  });

  it('ends a complete stream without its terminator with omit_done', async () => {
    await addFault({ omit_done: true, times: 3 });
    const chatRes = await timedStream('/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } }));
    expect(chatRes.events.map((e) => e.text)).not.toContain('data: [DONE]');
    const chunks = chatRes.events.map((e) => JSON.parse(e.text.slice(6)));
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);
    const m = await streamNamed(sim.url, '/v1/messages', { model: 'm', max_tokens: 6, messages: user('hi'), stream: true }, ANTHROPIC);
    expect([m.broken, m.events.at(-1)!.event]).toEqual([false, 'message_delta']);
    const r = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'hi', stream: true });
    expect([r.broken, r.events.at(-1)!.event, r.events.some((e) => e.event === 'response.completed')]).toEqual([false, 'response.output_item.done', false]);
  });

  it('lets the OpenAI SDK finish a stream without [DONE]', async () => {
    await addFault({ omit_done: true, times: 1 });
    const stream = await client.chat.completions.create({ ...chatBody(), stream: true });
    const text: string[] = [];
    for await (const chunk of stream) text.push(chunk.choices[0]?.delta.content ?? '');
    expect(text.join('')).toMatch(/^This is a simulated reply to: hi/);
  });
});

describe('assistant prefill: refusal and continuation', () => {
  const prefilled = (prefill: string, extra: object = {}) => ({
    model: 'm', max_tokens: 30, messages: [...user('hi'), { role: 'assistant', content: prefill }], ...extra,
  });

  it('refuses a prefill with reject_prefill; user-ending requests pass and keep the fault', async () => {
    await addFault({ reject_prefill: true, times: 1 });
    expect((await messages({ model: 'm', max_tokens: 5, messages: user('hi') })).status).toBe(200);
    expect((await chat({ messages: [...user('hi'), { role: 'assistant', content: 'x' }] })).status).toBe(200);
    expect((await simCall(sim.url, '/__sim/faults')).json.data[0].remaining).toBe(1);
    const refused = await messages(prefilled('This is'));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'This model does not support assistant message prefill. The conversation must end with a user message.' },
    });
    expect((await simCall(sim.url, '/__sim/faults')).json.data).toEqual([]);
    expect((await messages(prefilled('This is'))).status).toBe(200);
  });

  it('continues a prefill with the rest of the answer (JSON), counting the prefill as input', async () => {
    const whole = (await messages({ model: 'm', max_tokens: 30, messages: user('hi') })).json;
    const full: string = whole.content[0].text;
    const res = (await messages(prefilled('This is a simulated '))).json; // trailing whitespace is trimmed
    expect(res.content[0].text).toBe(full.slice('This is a simulated'.length));
    expect(res.usage.output_tokens).toBe(countTextTokens(res.content[0].text));
    expect(res.usage.input_tokens).toBe(countMessagesInputTokens(prefilled('This is a simulated ')));
    expect((await messages(prefilled('Something else'))).json.content[0].text).toBe(full);
  });

  it('continues a stream cut after 40 of 60 content events with exactly the rest', async () => {
    // The first (cut) request and the continuation both get 60-word answers: one fault each, in order.
    await addFault({ answer_words: 60, truncate_after_chunks: 3 + 40, times: 1 });
    await addFault({ answer_words: 60 });
    const body = { model: 'm', max_tokens: 100, messages: user('tell me'), stream: true };
    const cut = await streamNamed(sim.url, '/v1/messages', body, ANTHROPIC);
    expect(cut.broken).toBe(true);
    const delivered = cut.events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text).join('');
    expect(delivered.split(' ')).toHaveLength(40);
    const whole = (await messages({ ...body, stream: false })).json.content[0].text as string;
    const rest = await streamNamed(sim.url, '/v1/messages', { ...body, messages: [...body.messages, { role: 'assistant', content: delivered }] }, ANTHROPIC);
    const restText = rest.events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text);
    expect(restText).toHaveLength(20);
    expect(delivered + restText.join('')).toBe(whole);
    expect(rest.events.at(-1)!.event).toBe('message_stop');
    expect(rest.events.find((e) => e.event === 'message_delta')!.data.usage.output_tokens).toBe(countTextTokens(restText.join('')));
  });
});

describe('credential scoping', () => {
  it('matches a fault only for its key (bearer, x-api-key or api-key), and both model and key when given', async () => {
    const added = await addFault({ status: 429 }, { key: 'sk-bad' });
    expect(added.json).toMatchObject({ model: null, key: 'sk-bad' });
    expect((await chat({}, { authorization: 'Bearer sk-bad' })).status).toBe(429);
    expect((await chat({}, { authorization: 'Bearer sk-good' })).status).toBe(200);
    expect((await chat({}, { 'api-key': 'sk-bad' })).status).toBe(429);
    expect((await messages({ model: 'm', max_tokens: 5, messages: user('hi') }, { 'x-api-key': 'sk-bad' })).status).toBe(429);
    expect((await messages({ model: 'm', max_tokens: 5, messages: user('hi') })).status).toBe(200);
    await simCall(sim.url, '/__sim/faults', 'DELETE');
    await addFault({ status: 503 }, { model: 'a', key: 'k1' });
    expect((await chat({ model: 'a' }, { authorization: 'Bearer k2' })).status).toBe(200);
    expect((await chat({ model: 'b' }, { authorization: 'Bearer k1' })).status).toBe(200);
    expect((await chat({ model: 'a' }, { authorization: 'Bearer k1' })).status).toBe(503);
  });
});

describe('request log', () => {
  it('records every model request in arrival order, filters by model, and resets', async () => {
    const before = Date.now();
    await addFault({ status: 503, times: 1 }, { model: 'down' });
    await chat({ model: 'down' }, { authorization: 'Bearer k1' });
    await chat({ stream: true });
    await messages({ model: 'claude', max_tokens: 5, messages: [...user('hi'), { role: 'assistant', content: 'This' }] });
    await responses({ model: 'r' });
    await simCall(sim.url, '/v1/models');
    const log = (await simCall(sim.url, '/__sim/requests')).json;
    expect(log.object).toBe('list');
    expect(log.data).toEqual([
      { at_ms: expect.any(Number), path: '/v1/chat/completions', model: 'down', key: 'k1', stream: false, last_role: 'user', status: 503 },
      { at_ms: expect.any(Number), path: '/v1/chat/completions', model: 'm', key: null, stream: true, last_role: 'user', status: 200 },
      { at_ms: expect.any(Number), path: '/v1/messages', model: 'claude', key: 'sk-a', stream: false, last_role: 'assistant', status: 200 },
      { at_ms: expect.any(Number), path: '/v1/responses', model: 'r', key: null, stream: false, last_role: null, status: 200 },
    ]);
    expect(log.data[0].at_ms).toBeGreaterThanOrEqual(before);
    expect(log.data.map((r: any) => r.at_ms)).toEqual([...log.data.map((r: any) => r.at_ms)].sort((a, b) => a - b));
    expect((await simCall(sim.url, '/__sim/requests?model=down')).json.data).toHaveLength(1);
    await simCall(sim.url, '/__sim/reset', 'POST');
    expect((await simCall(sim.url, '/__sim/requests')).json.data).toEqual([]);
  });

  it('keeps only the last entries of its bound', () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) {
      const res = Object.assign(new EventEmitter(), { headersSent: true, statusCode: 200 + i }) as unknown as http.ServerResponse;
      log.add({ at_ms: i, path: '/p', model: `m${i}`, key: null, stream: false, last_role: null }, res);
    }
    expect(log.list().map((r) => [r.model, r.status])).toEqual([['m2', 202], ['m3', 203], ['m4', 204]]);
    expect(log.list('m3')).toHaveLength(1);
  });
});

describe('sized answers', () => {
  it('answers exactly answer_words content events in every format, with usage to match', async () => {
    await addFault({ answer_words: 60 });
    const c = chatText((await chat({ stream: true, stream_options: { include_usage: true } })).text);
    expect(deltas(c)).toHaveLength(60);
    expect(c.at(-1).usage.completion_tokens).toBe(countTextTokens(deltas(c).join('')));
    expect(c.at(-2).choices[0].finish_reason).toBe('stop');
    const m = parseNamedSse((await messages({ model: 'm', max_tokens: 10, messages: user('hi'), stream: true })).text);
    expect(m.filter((e) => e.event === 'content_block_delta')).toHaveLength(60);
    expect(m.find((e) => e.event === 'message_delta')!.data.delta.stop_reason).toBe('end_turn');
    const r = parseNamedSse((await responses({ stream: true })).text);
    expect(r.filter((e) => e.event === 'response.output_text.delta')).toHaveLength(60);
    expect(r.at(-1)!.data.response.status).toBe('completed');
  });

  it('without the fault, an answer stops at its natural length whatever max_tokens allows (issue 31 item 13)', async () => {
    const natural = splitWords(naturalReply('hi'));
    for (const n of [40, 60, 4096]) expect(deltas(chatText((await chat({ stream: true, max_tokens: n })).text))).toEqual(natural);
  });
});
