/**
 * Issue 31 item 2: a messages-format model (claude-sonnet-4-5) on /v1/responses through the official
 * openai SDK: responses -> chat -> messages (the registry's chain), JSON, streamed and with function
 * tools; the usage row is what the upstream reported, and the Responses usage says the same.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settled, type Account } from '../helpers/chat.js';

const MODEL = 'claude-sonnet-4-5';

describeStore('a messages-format model on /v1/responses', () => {
  let t: TestGateway;
  let a: Account;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const lastUpstream = async (): Promise<{ path: string; body: Record<string, unknown> }> =>
    fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string; body: Record<string, unknown> }>);

  it('answers JSON and a stream with the same text, billed as the upstream reported', async () => {
    const before = await settled(a);
    const plain = await client.responses.create({ model: MODEL, input: 'Say hi', store: false });
    expect(plain).toMatchObject({ object: 'response', model: MODEL, status: 'completed' });
    expect(plain.output_text).toMatch(/\S/);
    const upstream = await lastUpstream();
    expect(upstream.path).toBe('/v1/messages');
    expect(upstream.body).toMatchObject({ max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hi' }] }] });
    const middle = await settled(a);
    expect(middle.rows).toBe(before.rows + 1);
    expect(middle.last?.details).toMatchObject({ input: plain.usage!.input_tokens, output: plain.usage!.output_tokens });

    const stream = client.responses.stream({ model: MODEL, input: 'Say hi', store: false });
    const types: string[] = [];
    const deltas: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe(plain.output_text);
    expect(final.output_text).toBe(plain.output_text);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.at(-1)).toBe('response.completed');
    expect(final.usage).toMatchObject({ input_tokens: plain.usage!.input_tokens, output_tokens: plain.usage!.output_tokens });
    const after = await settled(a);
    expect(after.rows).toBe(middle.rows + 1);
    expect(after.last?.details).toMatchObject({ input: final.usage!.input_tokens, output: final.usage!.output_tokens });
    expect(middle.balanceNano - after.balanceNano).toBe(before.balanceNano - middle.balanceNano);
  });

  it('carries function tools both ways, streamed arguments included', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const response = await client.responses.create({ model: MODEL, input: 'Weather in Paris?', tools, store: false });
    const call = response.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: expect.any(String) });
    expect((await lastUpstream()).body).toMatchObject({ tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] });

    const stream = client.responses.stream({ model: MODEL, input: 'Weather in Paris?', tools, store: false });
    const args: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => args.push(e.delta));
    const final = await stream.finalResponse();
    const streamed = final.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(args.join('')).toBe(streamed.arguments);

    const second = await client.responses.create({
      model: MODEL, tools, store: false,
      input: [{ role: 'user', content: 'Weather in Paris?' }, { type: 'function_call', call_id: streamed.call_id, name: 'get_weather', arguments: streamed.arguments }, { type: 'function_call_output', call_id: streamed.call_id, output: '21 degrees' }],
    });
    expect(second.output_text).toMatch(/\S/);
    const sent = (await lastUpstream()).body as { messages: Array<{ role: string; content: Array<{ type: string }> }> };
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent.messages[2]!.content[0]!.type).toBe('tool_result');
  });

  it('refuses what the chain cannot carry, nothing charged', async () => {
    const before = await settled(a);
    await expect(client.responses.create({ model: MODEL, input: 'x', temperature: 1.5, store: false })).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'temperature' });
    await expect(client.responses.create({ model: MODEL, input: 'x', tools: [{ type: 'web_search' }], store: false })).rejects.toMatchObject({ status: 400, code: 'unsupported_responses_tools' });
    expect(await settled(a)).toEqual(before);
  });
});
