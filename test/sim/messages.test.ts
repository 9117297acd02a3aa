import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countMessagesInputTokens } from '../../src/sim/messages.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { naturalReply } from '../../src/sim/text.js';
import { countTextTokens } from '../../src/tokenize.js';
import { assembleMessage as assemble, simCall, streamNamed } from './helpers.js';

let sim: Simulator;

beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const HEADERS = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' };
const post = (body: unknown, path = '/v1/messages') => simCall(sim.url, path, 'POST', body, HEADERS);
const stream = (body: object) => streamNamed(sim.url, '/v1/messages', { ...body, stream: true }, HEADERS);
const addFault = (fault: SimFault, model?: string) => simCall(sim.url, '/__sim/faults', 'POST', { model, fault });
const user = (content: unknown) => [{ role: 'user', content }];
const weatherTool = {
  name: 'get_weather', description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city', 'days'] },
};
const searchTool = { type: 'web_search_20250305', name: 'web_search', max_uses: 5 };

describe('messages (JSON)', () => {
  it('answers a Message with exact usage', async () => {
    const res = await post({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages: user('Hi there') });
    expect(res.status).toBe(200);
    expect(res.headers['request-id']).toMatch(/^req_sim/);
    expect(res.json).toMatchObject({
      type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null,
    });
    expect(res.json.id).toMatch(/^msg_sim/);
    expect(res.json.content).toHaveLength(1);
    // No `citations` member (the API omits it; @ai-sdk/anthropic 3.x refuses null), and a natural
    // length: max_tokens 4096 is a cap, not a target (issue 31 item 13).
    expect(res.json.content).toEqual([{ type: 'text', text: naturalReply('Hi there') }]);
    // 3 (overhead) + "Hi there" (2)
    expect(res.json.usage).toEqual({
      input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: countTextTokens(naturalReply('Hi there')), server_tool_use: null, service_tier: 'standard', inference_geo: null,
    });
    expect(res.json.usage.output_tokens).toBeLessThan(40);
  });

  it('stops at max_tokens and at stop sequences', async () => {
    const cut = (await post({ model: 'm', max_tokens: 3, messages: user('Hi') })).json;
    expect([cut.content[0].text, cut.stop_reason, cut.usage.output_tokens]).toEqual(['This is a', 'max_tokens', 3]);
    const stopped = (await post({ model: 'm', max_tokens: 50, messages: user('Hi'), stop_sequences: ['zzz', 'reply'] })).json;
    expect([stopped.content[0].text, stopped.stop_reason, stopped.stop_sequence]).toEqual(['This is a simulated ', 'stop_sequence', 'reply']);
    expect(stopped.usage.output_tokens).toBe(countTextTokens('This is a simulated '));
  });

  it('counts system, every content block and tools', async () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] }] },
    ];
    const body = { model: 'm', max_tokens: 64, system: [{ type: 'text', text: 'Be terse.' }], messages, tools: [weatherTool] };
    const expected = 3 + countTextTokens('Be terse.') + countTextTokens('weather?')
      + countTextTokens(JSON.stringify({ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }))
      + countTextTokens('get_weather') + countTextTokens('{"city":"Paris"}') + countTextTokens('sunny') + countTextTokens(JSON.stringify([weatherTool]));
    expect(countMessagesInputTokens(body)).toBe(expected);
    const res = (await post(body)).json;
    expect(res.usage.input_tokens).toBe(expected);
    // The last user message holds only tool results: a text answer quoting the user's question.
    expect([res.stop_reason, res.content[0].text]).toEqual(['end_turn', naturalReply('weather?')]);
    const counted = await post({ model: 'm', system: body.system, messages, tools: body.tools }, '/v1/messages/count_tokens');
    expect(counted.json).toEqual({ input_tokens: expected });
  });

  it('rejects invalid requests with Anthropic errors', async () => {
    const noVersion = await simCall(sim.url, '/v1/messages', 'POST', { model: 'm', max_tokens: 5, messages: user('x') });
    expect(noVersion.status).toBe(400);
    expect(noVersion.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    expect(Object.keys(noVersion.json).sort()).toEqual(['error', 'request_id', 'type']);
    const noMax = await post({ model: 'm', messages: user('x') });
    expect([noMax.status, noMax.json.error.type, noMax.json.error.message]).toEqual([400, 'invalid_request_error', 'max_tokens: Field required']);
    expect((await post({ model: 'm', max_tokens: 5, messages: [] })).status).toBe(400);
    expect((await simCall(sim.url, '/v1/messages', 'POST', '{nope', HEADERS)).json.error.type).toBe('invalid_request_error');
    const unknownTool = await post({ model: 'm', max_tokens: 5, messages: user('x'), tools: [weatherTool], tool_choice: { type: 'tool', name: 'nope' } });
    expect([unknownTool.status, unknownTool.json.error.type]).toEqual([400, 'invalid_request_error']);
    const countNoVersion = await simCall(sim.url, '/v1/messages/count_tokens', 'POST', { model: 'm', messages: user('x') });
    expect(countNoVersion.status).toBe(400);
  });
});

describe('messages (stream)', () => {
  it('streams the Messages event sequence that assembles to the JSON answer', async () => {
    const body = { model: 'm', max_tokens: 64, messages: user('stream me') };
    const json = (await post(body)).json;
    const res = await stream(body);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.events.every((e) => e.event === e.data.type)).toBe(true);
    const words = json.content[0].text.split(' ').length;
    expect(res.events.map((e) => e.event)).toEqual([
      'message_start', 'content_block_start', 'ping', ...Array(words).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    const start = res.events[0]!.data.message;
    expect(start).toMatchObject({ content: [], stop_reason: null, usage: { input_tokens: json.usage.input_tokens, output_tokens: 1 } });
    expect(res.events.at(-2)!.data).toEqual({
      type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null },
      usage: { input_tokens: json.usage.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: countTextTokens(naturalReply('stream me')), server_tool_use: null },
    });
    expect({ ...assemble(res.events), id: json.id }).toEqual(json);
  });

  it('streams a tool_use input in three input_json_delta pieces, the first empty', async () => {
    const body = { model: 'm', max_tokens: 100, messages: user('weather?'), tools: [weatherTool] };
    const json = (await post(body)).json;
    expect(json.stop_reason).toBe('tool_use');
    expect(json.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_sim/), name: 'get_weather', input: { city: 'sim', days: 1 }, caller: { type: 'direct' } }]);
    expect(json.usage.output_tokens).toBe(countTextTokens('get_weather{"city":"sim","days":1}'));
    const res = await stream(body);
    const pieces = res.events.filter((e) => e.data.delta?.type === 'input_json_delta').map((e) => e.data.delta.partial_json);
    expect(pieces).toHaveLength(3);
    expect(pieces[0]).toBe('');
    expect(res.events[1]!.data.content_block).toMatchObject({ type: 'tool_use', input: {} });
    const assembled = assemble(res.events);
    expect({ ...assembled, id: json.id, content: [{ ...assembled.content[0], id: json.content[0].id }] }).toEqual(json);
  });
});

describe('messages tools and web search', () => {
  it('honours tool_choice', async () => {
    const none = (await post({ model: 'm', max_tokens: 64, messages: user('weather?'), tools: [weatherTool], tool_choice: { type: 'none' } })).json;
    expect(none.stop_reason).toBe('end_turn');
    const other = { ...weatherTool, name: 'get_time' };
    const forced = (await post({ model: 'm', max_tokens: 10, messages: user('x'), tools: [weatherTool, other], tool_choice: { type: 'tool', name: 'get_time' } })).json;
    expect(forced.content[0].name).toBe('get_time');
  });

  it('adds server_tool_use and web_search_tool_result blocks and counts the searches', async () => {
    for (const [text, count] of [['please search the news', 1], ['search twice', 2], ['no lookup', 0]] as const) {
      const res = (await post({ model: 'm', max_tokens: 20, messages: user(text), tools: [searchTool] })).json;
      expect(res.content.map((b: any) => b.type)).toEqual([...Array(count).fill(['server_tool_use', 'web_search_tool_result']).flat(), 'text']);
      expect(res.usage.server_tool_use).toEqual(count ? { web_search_requests: count, web_fetch_requests: 0 } : null);
      expect(res.usage.output_tokens).toBe(countTextTokens(res.content.at(-1).text));
      if (count) {
        expect(res.content[0]).toMatchObject({ name: 'web_search', input: { query: text }, id: expect.stringMatching(/^srvtoolu_/) });
        expect(res.content[1]).toMatchObject({ tool_use_id: res.content[0].id, content: [{ type: 'web_search_result' }] });
      }
    }
  });

  it('streams web search blocks and repeats server_tool_use in message_delta', async () => {
    const body = { model: 'm', max_tokens: 20, messages: user('search twice'), tools: [searchTool] };
    const json = (await post(body)).json;
    const res = await stream(body);
    const starts = res.events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type);
    expect(starts).toEqual(['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text']);
    expect(res.events.filter((e) => e.event === 'ping')).toHaveLength(1);
    expect(res.events.at(-2)!.data.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
    const strip = (m: any) => ({ ...m, id: '', content: m.content.map((b: any) => ({ ...b, id: '', tool_use_id: '' })) });
    expect(strip(assemble(res.events))).toEqual(strip(json));
  });
});

describe('messages prompt caching', () => {
  const cached = (system: string, text = 'hi', ttl?: '1h') => ({
    model: 'm', max_tokens: 5, messages: user(text),
    system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } }],
  });

  it('writes the cache on the first request for a system text and reads it afterwards', async () => {
    const body = cached('You are a careful assistant. '.repeat(20));
    const total = countMessagesInputTokens(body);
    const half = Math.floor(total / 2);
    const first = (await post(body)).json.usage;
    expect(first).toMatchObject({ input_tokens: total - half, cache_creation_input_tokens: half, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: half } });
    const second = (await post(body)).json.usage;
    expect(second).toMatchObject({ input_tokens: total - half, cache_creation_input_tokens: 0, cache_read_input_tokens: half });
    // Same system text, different question: still a read (half of this request's total).
    const other = cached('You are a careful assistant. '.repeat(20), 'another question');
    expect((await post(other)).json.usage.cache_read_input_tokens).toBe(Math.floor(countMessagesInputTokens(other) / 2));
    // count_tokens reports the total and leaves the cache alone.
    expect((await post({ model: 'm', messages: body.messages, system: body.system }, '/v1/messages/count_tokens')).json).toEqual({ input_tokens: total });
    await simCall(sim.url, '/__sim/reset', 'POST');
    expect((await post(body)).json.usage.cache_creation_input_tokens).toBe(half);
  });

  it('streams the cache counters in message_start and message_delta; 1h TTL and message blocks count', async () => {
    const body = cached('Stream system', 'hi', '1h');
    const half = Math.floor(countMessagesInputTokens(body) / 2);
    const res = await stream(body);
    expect(res.events[0]!.data.message.usage).toMatchObject({ cache_creation_input_tokens: half, cache_creation: { ephemeral_1h_input_tokens: half, ephemeral_5m_input_tokens: 0 } });
    expect(res.events.at(-2)!.data.usage).toMatchObject({ cache_creation_input_tokens: half, cache_read_input_tokens: 0 });
    expect((await stream(body)).events.at(-2)!.data.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: half });
    const marked = { model: 'm', max_tokens: 5, messages: user([{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }]) };
    expect((await post(marked)).json.usage.cache_creation_input_tokens).toBe(Math.floor(countMessagesInputTokens(marked) / 2));
    const plain = { model: 'm', max_tokens: 5, messages: user('hello'), system: 'Stream system' };
    expect((await post(plain)).json.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });
});

describe('messages faults', () => {
  it('answers status faults with Anthropic errors', async () => {
    for (const [status, type] of [[500, 'api_error'], [503, 'api_error'], [529, 'overloaded_error'], [429, 'rate_limit_error'], [401, 'authentication_error']] as const) {
      await addFault({ status, times: 1 });
      const res = await post({ model: 'm', max_tokens: 5, messages: user('x') });
      expect(res.status).toBe(status);
      expect(res.json).toMatchObject({ type: 'error', error: { type } });
      expect(res.headers['retry-after']).toBe(status === 429 ? '7' : undefined);
    }
    await addFault({ status: 529, times: 1 });
    expect((await post({ model: 'm', messages: user('x') }, '/v1/messages/count_tokens')).json.error.type).toBe('overloaded_error');
  });

  it('truncates the stream after N events', async () => {
    await addFault({ truncate_after_chunks: 4 });
    const res = await stream({ model: 'm', max_tokens: 10, messages: user('cut') });
    expect([res.status, res.broken, res.events.length]).toEqual([200, true, 4]);
  });

  it('sends an overloaded error event after N events', async () => {
    await addFault({ error_after_chunks: 3 });
    const res = await stream({ model: 'm', max_tokens: 10, messages: user('err') });
    expect(res.broken).toBe(false);
    expect(res.events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'error']);
    expect(res.events[3]!.data).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('omits usage: no usage in JSON, zeros in message_start, none in message_delta', async () => {
    await addFault({ omit_usage: true });
    expect((await post({ model: 'm', max_tokens: 5, messages: user('x') })).json).not.toHaveProperty('usage');
    const res = await stream({ model: 'm', max_tokens: 5, messages: user('x') });
    expect(res.events[0]!.data.message.usage).toMatchObject({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    expect(res.events.at(-2)!.data).not.toHaveProperty('usage');
    expect(res.events.at(-1)!.event).toBe('message_stop');
  });

  it('applies latency_ms and records the request with its headers for /__sim/last', async () => {
    await addFault({ latency_ms: 120, times: 1 });
    const started = performance.now();
    await post({ model: 'm', max_tokens: 5, messages: user('remember me') });
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    const last = (await simCall(sim.url, '/__sim/last')).json;
    expect(last).toMatchObject({ path: '/v1/messages', body: { model: 'm', messages: user('remember me') } });
    expect(last.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' });
  });
});
