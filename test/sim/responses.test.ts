import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countResponsesInputTokens } from '../../src/sim/responses.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { naturalReply } from '../../src/sim/text.js';
import { countTextTokens } from '../../src/tokenize.js';
import { comparableResponse as comparable, parseNamedSse, simCall, streamNamed } from './helpers.js';

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const post = (body: unknown) => simCall(sim.url, '/v1/responses', 'POST', body);
const addFault = (fault: SimFault, model?: string) => simCall(sim.url, '/__sim/faults', 'POST', { model, fault });
const weatherTool = {
  type: 'function' as const, name: 'get_weather', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'unit'] },
};

describe('responses (JSON)', () => {
  it('answers a Response object with exact usage', async () => {
    const res = await post({ model: 'gpt-4o-mini', input: 'Hi there' });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^req_sim_/);
    const r = res.json;
    expect(r).toMatchObject({
      object: 'response', status: 'completed', model: 'gpt-4o-mini', error: null, incomplete_details: null, instructions: null,
      max_output_tokens: null, tools: [], tool_choice: 'auto', parallel_tool_calls: true, temperature: 1, top_p: 1, metadata: {},
      previous_response_id: null, store: true, truncation: 'disabled', text: { format: { type: 'text' } },
    });
    expect(r.id).toMatch(/^resp_sim[0-9a-f]{24}$/);
    expect(r.completed_at).toBe(r.created_at);
    expect(r.output).toEqual([{
      id: expect.stringMatching(/^msg_sim/), type: 'message', status: 'completed', role: 'assistant',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: naturalReply('Hi there') }],
    }]);
    // A natural length (issue 31 item 13): no limit asked, a short answer.
    const output = countTextTokens(naturalReply('Hi there'));
    expect(output).toBeLessThan(40);
    // 3 (overhead) + "Hi there" (2)
    expect(r.usage).toEqual({
      input_tokens: 5, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 5 + output,
    });
  });

  it('works with the SDK, echoes request fields and is deterministic', async () => {
    const body = { model: 'm', input: 'same question', instructions: 'Be terse.', max_output_tokens: 64, temperature: 0.2, metadata: { a: 'b' } };
    const a = await client.responses.create(body);
    const b = await client.responses.create(body);
    expect(b.id).toBe(a.id);
    expect(b.output).toEqual(a.output);
    expect(a.output_text).toBe(naturalReply('same question'));
    expect(a).toMatchObject({ instructions: 'Be terse.', max_output_tokens: 64, temperature: 0.2, metadata: { a: 'b' } });
    // 3 + "Be terse." (3) + "same question" (2)
    const output = countTextTokens(naturalReply('same question'));
    expect(a.usage).toMatchObject({ input_tokens: 8, output_tokens: output, total_tokens: 8 + output });
  });

  it('is incomplete when max_output_tokens cuts the sentence', async () => {
    const r = (await post({ model: 'm', input: 'Hi', max_output_tokens: 3 })).json;
    expect(r).toMatchObject({ status: 'incomplete', completed_at: null, incomplete_details: { reason: 'max_output_tokens' } });
    expect(r.output[0]).toMatchObject({ status: 'incomplete', content: [{ text: 'This is a' }] });
    expect(r.usage.output_tokens).toBe(3);
    const capped = (await post({ model: 'm', input: 'Hi', max_output_tokens: 100_000 })).json;
    expect([capped.status, capped.usage.output_tokens]).toEqual(['completed', countTextTokens(naturalReply('Hi'))]);
  });

  it('counts input items text by text and reports half as cached with prompt_cache_key', async () => {
    const input = [
      { role: 'user', content: [{ type: 'input_text', text: 'hello world' }, { type: 'input_image', image_url: 'https://x/y.png' }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is sunny.' }] },
      { role: 'user', content: 'thanks' },
    ];
    const expected = 3 + countTextTokens('Be terse.') + countTextTokens('hello world')
      + countTextTokens(JSON.stringify({ type: 'input_image', image_url: 'https://x/y.png' }))
      + countTextTokens('get_weather') + countTextTokens('{"city":"Paris"}') + countTextTokens('sunny') + countTextTokens('It is sunny.')
      + countTextTokens('thanks') + countTextTokens(JSON.stringify([weatherTool]));
    const body = { model: 'm', instructions: 'Be terse.', input, tools: [weatherTool], tool_choice: 'none' as const, prompt_cache_key: 'k' };
    expect(countResponsesInputTokens(body)).toBe(expected);
    const r = (await post(body)).json;
    expect(r.usage.input_tokens).toBe(expected);
    expect(r.usage.input_tokens_details.cached_tokens).toBe(Math.floor(expected / 2));
    expect(r.output[0].content[0].text).toMatch(/^This is a simulated reply to: thanks/);
  });

  it('rejects invalid requests with OpenAI errors', async () => {
    const noModel = await post({ input: 'x' });
    expect([noModel.status, noModel.json.error.type, noModel.json.error.param]).toEqual([400, 'invalid_request_error', 'model']);
    expect((await post({ model: 'm' })).json.error.param).toBe('input');
    expect((await post({ model: 'm', input: 'x', max_output_tokens: 0 })).json.error.param).toBe('max_output_tokens');
    expect((await simCall(sim.url, '/v1/responses', 'POST', '{nope')).status).toBe(400);
    await expect(client.responses.create({ model: 'm', input: 'x', tools: [weatherTool], tool_choice: { type: 'function', name: 'nope' } }))
      .rejects.toMatchObject({ status: 400 });
  });
});

describe('responses (stream)', () => {
  it('streams the Responses event sequence that assembles to the JSON answer', async () => {
    const body = { model: 'm', input: 'stream me', max_output_tokens: 64 };
    const json = (await post(body)).json;
    const res = await simCall(sim.url, '/v1/responses', 'POST', { ...body, stream: true });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.text).not.toContain('[DONE]');
    const events = parseNamedSse(res.text);
    expect(events.every((e, i) => e.event === e.data.type && e.data.sequence_number === i)).toBe(true);
    const words = json.output[0].content[0].text.split(' ').length;
    expect(events.map((e) => e.event)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      ...Array(words).fill('response.output_text.delta'), 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed',
    ]);
    expect(events[0]!.data.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    const text = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(text).toBe(json.output[0].content[0].text);
    expect(comparable(events.at(-1)!.data.response)).toEqual(comparable(json));
  });

  it('gives the SDK stream helper the same final response and usage', async () => {
    const body = { model: 'm', input: 'sdk stream', instructions: 'Be terse.' };
    const json = await client.responses.create(body);
    const deltas: string[] = [];
    const stream = client.responses.stream(body);
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(json.output_text);
    expect(deltas.join('')).toBe(json.output_text);
    expect(final.usage).toEqual(json.usage);
    expect(final.status).toBe('completed');
  });

  it('ends an incomplete stream with response.incomplete', async () => {
    const { events } = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'Hi', max_output_tokens: 2, stream: true });
    expect(events.at(-1)!.data.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { output_tokens: 2 } });
    expect(events.at(-1)!.event).toBe('response.incomplete');
  });
});

describe('responses tools', () => {
  it('calls the first function with arguments built from its schema, in JSON and in the stream', async () => {
    const body = { model: 'm', input: 'weather?', tools: [weatherTool] };
    const json = await client.responses.create(body);
    expect(json.output).toHaveLength(1);
    const call = json.output[0]!;
    if (call.type !== 'function_call') throw new Error('expected a function call');
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed', arguments: '{"city":"sim","unit":"c"}' });
    expect(call.id).toMatch(/^fc_sim/);
    expect(call.call_id).toMatch(/^call_sim_/);
    expect(json.usage!.output_tokens).toBe(countTextTokens(`get_weather${call.arguments}`));
    const raw = parseNamedSse((await post({ ...body, stream: true })).text);
    expect(raw.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta).join('')).toBe(call.arguments);
    expect(raw.find((e) => e.event === 'response.function_call_arguments.done')!.data).toMatchObject({ name: 'get_weather', arguments: call.arguments });
    const final = await client.responses.stream(body).finalResponse();
    expect(comparable(final).output).toEqual([{ ...comparable(json).output[0], parsed_arguments: null }]);
    expect(final.usage).toEqual(json.usage);
  });

  it('answers text with tool_choice none or after a function_call_output', async () => {
    const none = (await post({ model: 'm', input: 'weather?', tools: [weatherTool], tool_choice: 'none' })).json;
    expect(none.output[0].type).toBe('message');
    const after = (await post({
      model: 'm', tools: [weatherTool],
      input: [{ role: 'user', content: 'weather?' }, { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' }],
    })).json;
    expect(after.output[0].content[0].text).toMatch(/^This is a simulated reply to: weather\?/);
    const forced = (await post({ model: 'm', input: 'x', tools: [{ ...weatherTool, name: 'other' }, weatherTool], tool_choice: { type: 'function', name: 'get_weather' } })).json;
    expect(forced.output[0].name).toBe('get_weather');
  });

  it('runs 0, 1 or 2 built-in web searches before the message', async () => {
    for (const [input, tool, count] of [
      ['what is new? search', 'web_search', 1], ['search twice please', 'web_search_preview', 2], ['no lookup', 'web_search', 0],
    ] as const) {
      const r = (await post({ model: 'm', input, tools: [{ type: tool }] })).json;
      const calls = r.output.filter((o: any) => o.type === 'web_search_call');
      expect(calls).toHaveLength(count);
      for (const c of calls) {
        expect(c).toMatchObject({ status: 'completed', action: { type: 'search', query: input } });
        expect(c.id).toMatch(/^ws_/);
      }
      expect(r.output.at(-1).type).toBe('message');
      expect(r.output).toHaveLength(count + 1);
    }
    const none = (await post({ model: 'm', input: 'search', tools: [{ type: 'web_search' }], tool_choice: 'none' })).json;
    expect(none.output).toHaveLength(1);
  });

  it('streams web search calls with their progress events', async () => {
    const body = { model: 'm', input: 'search twice', tools: [{ type: 'web_search' as const }] };
    const { events } = await streamNamed(sim.url, '/v1/responses', { ...body, stream: true });
    const names = events.map((e) => e.event);
    const perCall = ['response.output_item.added', 'response.web_search_call.in_progress', 'response.web_search_call.searching',
      'response.web_search_call.completed', 'response.output_item.done'];
    expect(names.slice(2, 12)).toEqual([...perCall, ...perCall]);
    expect(events[3]!.data).toMatchObject({ output_index: 0, item_id: events[2]!.data.item.id });
    const final = await client.responses.stream(body).finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['web_search_call', 'web_search_call', 'message']);
    expect(final.output.slice(0, 2).every((o) => o.type === 'web_search_call' && o.status === 'completed')).toBe(true);
  });
});

describe('responses faults', () => {
  it('answers status faults with OpenAI errors', async () => {
    await addFault({ status: 429, times: 1 });
    const limited = await post({ model: 'm', input: 'x' });
    expect([limited.status, limited.headers['retry-after'], limited.json.error.type]).toEqual([429, '7', 'rate_limit_exceeded']);
    await addFault({ status: 500, times: 1 });
    await expect(client.responses.create({ model: 'm', input: 'x' })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('truncates the stream after N events', async () => {
    await addFault({ truncate_after_chunks: 3 });
    const res = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'cut', stream: true });
    expect([res.status, res.broken, res.events.length]).toEqual([200, true, 3]);
  });

  it('sends the Responses error event after N events', async () => {
    await addFault({ error_after_chunks: 2 });
    const res = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'err', stream: true });
    expect(res.broken).toBe(false);
    expect(res.events.map((e) => e.event)).toEqual(['response.created', 'response.in_progress', 'error']);
    expect(res.events[2]!.data).toEqual({ type: 'error', code: 'server_error', message: 'simulated upstream error', param: null, sequence_number: 2 });
  });

  it('sets usage to null with omit_usage, in JSON and in the final event', async () => {
    await addFault({ omit_usage: true });
    expect((await post({ model: 'm', input: 'x' })).json.usage).toBeNull();
    const { events } = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'x', stream: true });
    expect(events.at(-1)!.data.response).toMatchObject({ status: 'completed', usage: null });
  });

  it('applies latency_ms and chunk_delay_ms, and records the request for /__sim/last with its path', async () => {
    await addFault({ latency_ms: 120, chunk_delay_ms: 10, times: 1 });
    const started = performance.now();
    const { events } = await streamNamed(sim.url, '/v1/responses', { model: 'm', input: 'slow', max_output_tokens: 8, stream: true }, { authorization: 'Bearer x' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(115 + 8 * (events.length - 1));
    const last = (await simCall(sim.url, '/__sim/last')).json;
    expect(last).toMatchObject({ path: '/v1/responses', headers: { authorization: 'Bearer x' }, body: { model: 'm', input: 'slow' } });
    expect(sim.requests).toBe(1);
  });
});
