import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
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
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer' },
        precise: { type: 'boolean' }, hours: { type: 'array', items: { type: 'number' } }, extra: { type: 'object' }, note: { type: 'string' },
      },
      required: ['city', 'unit', 'days', 'precise', 'hours', 'extra'],
    },
  },
};
const timeTool = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] } } };

describe('tool calls', () => {
  it('calls the first tool with arguments built from its schema', async () => {
    const messages = user('weather in Paris?');
    const res = await client.chat.completions.create({ model: 'm', messages, tools: [weatherTool, timeTool] });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const toolCall = choice.message.tool_calls![0]!;
    expect(toolCall.id).toMatch(/^call_sim_/);
    if (toolCall.type !== 'function') throw new Error('expected a function call');
    expect(toolCall.function.name).toBe('get_weather');
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ city: 'sim', unit: 'celsius', days: 1, precise: true, hours: [], extra: {} });
    expect(res.usage!.completion_tokens).toBe(countTextTokens(toolCall.function.name + toolCall.function.arguments));
    expect(res.usage!.prompt_tokens).toBe(countChatPromptTokens(messages, [weatherTool, timeTool]));
  });

  it('honours tool_choice and answers text after a tool result', async () => {
    const forced = await client.chat.completions.create({
      model: 'm', messages: user('time?'), tools: [weatherTool, timeTool], tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const call0 = forced.choices[0]!.message.tool_calls![0]!;
    expect(call0.type === 'function' && call0.function.arguments).toBe('{"tz":"sim"}');
    const none = await client.chat.completions.create({ model: 'm', messages: user('time?'), tools: [timeTool], tool_choice: 'none' });
    expect(none.choices[0]!.finish_reason).toBe('stop');
    const after = await client.chat.completions.create({
      model: 'm', tools: [timeTool],
      messages: [...user('time?'), { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"sim"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '12:00' }],
    });
    expect(after.choices[0]!.message.content).toMatch(/^This is a simulated reply to: time\?/);
    const unknown = await call('/v1/chat/completions', 'POST', { model: 'm', messages: user('x'), tools: [timeTool], tool_choice: { type: 'function', function: { name: 'nope' } } });
    expect([unknown.status, unknown.json.error.param]).toEqual([400, 'tool_choice']);
  });

  it('streams tool calls that the SDK stream helper accumulates into valid JSON', async () => {
    const body = { model: 'm', messages: user('weather?'), tools: [weatherTool], stream_options: { include_usage: true } };
    const json = await client.chat.completions.create({ model: body.model, messages: body.messages, tools: body.tools });
    const doneArgs: string[] = [];
    const stream = client.chat.completions.stream(body);
    stream.on('tool_calls.function.arguments.done', (e) => doneArgs.push(e.arguments));
    const final = await stream.finalChatCompletion();
    const toolCall = final.choices[0]!.message.tool_calls![0]!;
    expect(toolCall.type === 'function' && toolCall.function.arguments).toBe(doneArgs[0]);
    expect(JSON.parse(doneArgs[0]!)).toMatchObject({ city: 'sim', unit: 'celsius' });
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.usage).toEqual(json.usage);
    const raw = parseSse((await call('/v1/chat/completions', 'POST', { ...body, stream: true })).text);
    expect(raw.chunks.filter((c) => c.choices[0]?.delta.tool_calls).length).toBeGreaterThan(2);
  });
});

