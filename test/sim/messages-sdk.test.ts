import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countMessagesInputTokens } from '../../src/sim/messages.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { countTextTokens } from '../../src/tokenize.js';
import { simCall } from './helpers.js';

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ baseURL: sim.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const addFault = (fault: SimFault) => simCall(sim.url, '/__sim/faults', 'POST', { fault });
const weatherTool = { name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
/** Drops the ids, which are seeded by the exact body (`stream` included). */
const idless = (m: any) => ({ ...m, id: '', content: m.content.map((b: any) => ({ ...b, ...(b.id ? { id: '' } : {}), ...(b.tool_use_id ? { tool_use_id: '' } : {}) })) });

describe('the Anthropic SDK against the simulator', () => {
  it('creates and streams the same message, usage included', async () => {
    const params = { model: 'claude-x', max_tokens: 64, messages: [{ role: 'user' as const, content: 'please search twice' }], tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const }] };
    const json = await client.messages.create(params);
    const text = (json.content.at(-1) as { text: string }).text;
    expect(json.usage).toMatchObject({ input_tokens: countMessagesInputTokens(params), output_tokens: countTextTokens(text), server_tool_use: { web_search_requests: 2 } });
    const texts: string[] = [];
    const final = await client.messages.stream(params).on('text', (t) => texts.push(t)).finalMessage();
    expect(idless(final)).toEqual({ ...idless(json), parsed_output: null }); // parsed_output: added by the SDK's stream helper
    expect(texts.join('')).toBe((json.content.at(-1) as { text: string }).text);
  });

  it('accumulates streamed tool input, and counts tokens', async () => {
    const params = { model: 'claude-x', max_tokens: 30, messages: [{ role: 'user' as const, content: 'weather?' }], tools: [weatherTool] };
    const final = await client.messages.stream(params).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'sim' } });
    const counted = await client.messages.countTokens({ model: 'claude-x', messages: params.messages, tools: params.tools });
    expect(counted.input_tokens).toBe(final.usage.input_tokens);
  });

  it('raises the SDK error classes for faults and for the stream error event', async () => {
    const params = { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    await addFault({ status: 429, times: 1 });
    await expect(client.messages.create(params)).rejects.toBeInstanceOf(Anthropic.RateLimitError);
    await addFault({ status: 529, times: 1 });
    await expect(client.messages.create(params)).rejects.toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });
    await addFault({ error_after_chunks: 2, times: 1 });
    await expect(client.messages.stream(params).finalMessage()).rejects.toThrow(/Overloaded/);
  });
});
