/**
 * The simulator's structured output (issue 31 item 13): chat `response_format`, responses
 * `text.format` and messages `output_config.format` are answered with JSON that satisfies them, a
 * schema sampled like tool arguments, `json_object` (no schema) with the object the prompt asks for;
 * still cut (and not valid JSON) when the output budget is smaller.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { promptObject } from '../../src/sim/structured.js';
import { sampleValue } from '../../src/sim/text.js';
import { countTextTokens } from '../../src/tokenize.js';
import { simCall, streamNamed } from './helpers.js';

let sim: Simulator;
let client: OpenAI;
beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
afterAll(() => sim.close());

const ANTHROPIC = { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' };
const weather = {
  type: 'object', additionalProperties: false, required: ['city', 'celsius', 'tags', 'when'],
  properties: {
    city: { type: 'string' }, celsius: { type: 'number' }, tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
    when: { anyOf: [{ type: 'null' }, { $ref: '#/$defs/day' }] },
  },
  $defs: { day: { type: 'string', enum: ['today', 'tomorrow'] } },
};
const expected = { city: 'sim', celsius: 1, tags: ['sim'], when: 'today' };

describe('the sampler', () => {
  it('fills required properties through anyOf, $ref and minItems', () => {
    expect(sampleValue(weather)).toEqual(expected);
    expect(sampleValue({ allOf: [{ type: 'integer' }] })).toBe(1);
  });

  it('builds a free-form object from the keys the prompt names, valued by their names', () => {
    expect(promptObject('Weather in Paris as JSON with keys city and celsius')).toEqual({ city: 'sim', celsius: 1 });
    expect(promptObject('Answer in JSON, keys: "name", age, is_open or price.')).toEqual({ name: 'sim', age: 1, is_open: true, price: 1 });
    expect(promptObject('Say hello as JSON')).toEqual({ reply: 'This is a simulated reply to: Say hello as JSON' });
  });
});

describe('chat completions', () => {
  it('answers response_format json_schema with JSON that fits the schema, JSON and stream alike', async () => {
    const body = { model: 'm', messages: [{ role: 'user' as const, content: 'Weather?' }], response_format: { type: 'json_schema' as const, json_schema: { name: 'w', strict: true, schema: weather } } };
    const json = await client.chat.completions.create(body);
    const content = json.choices[0]!.message.content!;
    expect([JSON.parse(content), json.choices[0]!.finish_reason, json.usage!.completion_tokens]).toEqual([expected, 'stop', countTextTokens(content)]);
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).toBe(content);
  });

  it('answers json_object with the object the prompt asks for', async () => {
    const json = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Weather in Paris as JSON with keys city and celsius' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ city: 'sim', celsius: 1 });
  });

  it('still cuts at max_tokens (finish_reason length)', async () => {
    const cut = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 3, response_format: { type: 'json_schema', json_schema: { name: 'w', schema: weather } } });
    expect([cut.choices[0]!.finish_reason, cut.usage!.completion_tokens]).toEqual(['length', countTextTokens(cut.choices[0]!.message.content!)]);
    expect(cut.usage!.completion_tokens).toBeLessThanOrEqual(3);
  });
});

describe('responses', () => {
  it('answers text.format json_schema and json_object', async () => {
    const schema = await client.responses.create({ model: 'm', input: 'Weather?', text: { format: { type: 'json_schema', name: 'w', strict: true, schema: weather } } });
    expect([JSON.parse(schema.output_text), schema.status]).toEqual([expected, 'completed']);
    const loose = await client.responses.create({ model: 'm', input: 'JSON with keys city and celsius', text: { format: { type: 'json_object' } } });
    expect(JSON.parse(loose.output_text)).toEqual({ city: 'sim', celsius: 1 });
  });
});

describe('messages', () => {
  const body = { model: 'm', max_tokens: 256, messages: [{ role: 'user', content: 'Weather?' }], output_config: { format: { type: 'json_schema', schema: weather } } };

  it('answers output_config.format with JSON text that fits the schema, JSON and stream alike', async () => {
    const json = (await simCall(sim.url, '/v1/messages', 'POST', body, ANTHROPIC)).json;
    expect(json.content).toEqual([{ type: 'text', text: JSON.stringify(expected) }]);
    expect([json.stop_reason, json.usage.output_tokens]).toEqual(['end_turn', countTextTokens(JSON.stringify(expected))]);
    const streamed = await streamNamed(sim.url, '/v1/messages', { ...body, stream: true }, ANTHROPIC);
    const text = streamed.events.filter((e) => e.data.delta?.type === 'text_delta').map((e) => e.data.delta.text).join('');
    expect(text).toBe(JSON.stringify(expected));
  });

  it('answers a forced tool whose input is any object with the object the prompt asks for', async () => {
    const tools = [{ name: 'json', input_schema: { type: 'object' } }];
    const json = (await simCall(sim.url, '/v1/messages', 'POST', {
      model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'Weather as JSON with keys city and celsius' }], tools, tool_choice: { type: 'tool', name: 'json' },
    }, ANTHROPIC)).json;
    expect(json.content[0]).toMatchObject({ type: 'tool_use', name: 'json', input: { city: 'sim', celsius: 1 } });
  });
});
