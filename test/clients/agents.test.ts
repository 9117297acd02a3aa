/**
 * The OpenAI Agents SDK (@openai/agents 0.14: the last release on openai 6, which runs on Node 20)
 * against a real gateway, unchanged, over real HTTP, through an `OpenAIProvider` whose base URL is the
 * gateway's /v1. Tracing is off (it would export to the vendor). The run's usage is the rows' sum.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adminUsage, lastUpstream, newRows, startClientsGateway, tokenChargeUsd, type AdminUsageRow, type ClientsGateway } from './harness.js';
import { pending } from './pending.js';

setTracingDisabled(true);

describe('OpenAI Agents SDK against the gateway', () => {
  let g: ClientsGateway;
  let responses: Runner;
  let chat: Runner;

  beforeAll(async () => {
    g = await startClientsGateway();
    // README "Clients": OpenAIProvider with the gateway's /v1; useResponses picks the API.
    responses = new Runner({ modelProvider: new OpenAIProvider({ apiKey: g.account.key, baseURL: `${g.url}/v1`, useResponses: true }), tracingDisabled: true });
    chat = new Runner({ modelProvider: new OpenAIProvider({ apiKey: g.account.key, baseURL: `${g.url}/v1`, useResponses: false }), tracingDisabled: true });
  });
  afterAll(async () => { await g?.dispose(); });

  const getWeather = tool({
    name: 'get_weather', description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `21 degrees in ${city}`,
  });

  const sum = (rows: AdminUsageRow[], key: 'input' | 'output'): number => rows.reduce((n, r) => n + Number(r.details[key]), 0);

  for (const [api, model] of [['responses', 'gpt-4o'], ['responses', 'gpt-4o-mini'], ['chat', 'gpt-4o-mini']] as const) {
    it(`${api} API, ${model}: a run answers, its usage is the row's, and a tool run takes two model calls`, async () => {
      const runner = api === 'responses' ? responses : chat;
      const before = await adminUsage(g);
      const result = await runner.run(new Agent({ name: 'assistant', instructions: 'Be brief.', model }), 'Hello agent');
      expect(result.finalOutput).toMatch(/\S/);
      expect((await lastUpstream(g)).path).toBe(api === 'responses' && model === 'gpt-4o' ? '/v1/responses' : '/v1/chat/completions');
      const usage = result.state.usage;
      const [row, ...more] = await newRows(g, before);
      expect(more).toEqual([]);
      expect(row).toMatchObject({ model, details: { input: usage.inputTokens, output: usage.outputTokens } });
      expect(row!.amount_usd).toBe(tokenChargeUsd(model, { input: usage.inputTokens, output: usage.outputTokens }));

      const mark = await adminUsage(g);
      const tooled = await runner.run(new Agent({ name: 'weather', instructions: 'Use the tool.', model, tools: [getWeather] }), 'Weather in Paris?');
      expect(tooled.finalOutput).toMatch(/\S/);
      const calls = tooled.newItems.filter((i) => i.type === 'tool_call_item').map((i) => i.rawItem);
      expect(calls).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: 'sim' }) }]);
      expect(tooled.newItems.filter((i) => i.type === 'tool_call_output_item').map((i) => (i as { output: unknown }).output)).toEqual(['21 degrees in sim']);
      const rows = await newRows(g, mark);
      expect(rows).toHaveLength(2);
      expect(tooled.state.usage.requests).toBe(2);
      expect([sum(rows, 'input'), sum(rows, 'output')]).toEqual([tooled.state.usage.inputTokens, tooled.state.usage.outputTokens]);
    });
  }

  it('responses API, gpt-4o: a streamed run streams the text and counts the usage billed', async () => {
    const before = await adminUsage(g);
    const result = await responses.run(new Agent({ name: 'assistant', model: 'gpt-4o' }), 'Stream to me', { stream: true });
    let text = '';
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    expect(text).toBe(result.finalOutput);
    const [row] = await newRows(g, before);
    expect(row!.details).toMatchObject({ input: result.state.usage.inputTokens, output: result.state.usage.outputTokens });
  });

  it('chat API (useResponses: false), claude-sonnet-4-5: a tool run through chat completions translated to messages, usage billed', async () => {
    const before = await adminUsage(g);
    const result = await chat.run(new Agent({ name: 'weather', instructions: 'Use the tool.', model: 'claude-sonnet-4-5', modelSettings: { maxTokens: 64 }, tools: [getWeather] }), 'Weather in Paris?');
    expect(result.finalOutput).toMatch(/\S/);
    expect(result.newItems.filter((i) => i.type === 'tool_call_item')).toHaveLength(1);
    const last = await lastUpstream(g);
    expect([last.path, last.body.model]).toEqual(['/v1/messages', 'claude-sonnet-4-5-20250929']);
    expect(last.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    const rows = await newRows(g, before);
    expect(rows.map((r) => r.model)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5']);
    expect([sum(rows, 'input'), sum(rows, 'output')]).toEqual([result.state.usage.inputTokens, result.state.usage.outputTokens]);
  });

  // Item 13: the simulator's structured output (an agent's outputType is a json_schema text format).
  it.skipIf(pending('item-13'))('responses API, gpt-4o: an agent with an outputType gets the parsed object', async () => {
    const result = await responses.run(new Agent({ name: 'city', model: 'gpt-4o', outputType: z.object({ city: z.string() }) }), 'Which city is the capital of France?');
    expect(result.finalOutput).toEqual({ city: expect.any(String) });
  });

  // Item 2: a Claude model on /v1/responses (streaming, function tools, usage).
  it.skipIf(pending('item-2'))('responses API, claude-sonnet-4-5: a run, a streamed run and a tool run, usage billed', async () => {
    const before = await adminUsage(g);
    const result = await responses.run(new Agent({ name: 'assistant', model: 'claude-sonnet-4-5' }), 'Hello agent');
    expect(result.finalOutput).toMatch(/\S/);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'claude-sonnet-4-5', details: { input: result.state.usage.inputTokens, output: result.state.usage.outputTokens } });
    const streamed = await responses.run(new Agent({ name: 'assistant', model: 'claude-sonnet-4-5' }), 'Hello agent', { stream: true });
    let text = '';
    for await (const delta of streamed.toTextStream()) text += delta;
    await streamed.completed;
    expect(text).toBe(streamed.finalOutput);
    const tooled = await responses.run(new Agent({ name: 'weather', model: 'claude-sonnet-4-5', tools: [getWeather] }), 'Weather in Paris?');
    expect(tooled.newItems.filter((i) => i.type === 'tool_call_item')).toHaveLength(1);
    expect(tooled.state.usage.requests).toBe(2);
  });

  // Item 3: stored responses; the SDK chains turns with previous_response_id.
  it.skipIf(pending('item-2', 'item-3'))('responses API, claude-sonnet-4-5: a second turn by previousResponseId', async () => {
    const agent = new Agent({ name: 'assistant', model: 'claude-sonnet-4-5' });
    const first = await responses.run(agent, 'My name is Ada.');
    const second = await responses.run(agent, 'What is my name?', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toMatch(/\S/);
    expect((await lastUpstream(g)).body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});
