/**
 * The openai SDK's chat completions against a messages-format offering (openai-chat--anthropic-messages):
 * JSON and streamed, with tool calls; billing from the vendor's usage with cache counters included.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settled, type Account, collectChatStream } from '../helpers/chat.js';

const tools: OpenAI.ChatCompletionTool[] = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}];

describeStore('chat completions over a messages-format offering', () => {
  let t: TestGateway;
  let a: Account;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  it('answers JSON and bills the vendor usage', async () => {
    const before = await settled(a);
    const completion = await client.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('claude-haiku-4-5');
    expect(completion.choices[0]!.message.content).toContain('Hello');
    const usage = completion.usage!;
    const after = await settled(a);
    // claude-haiku-4-5: 1 in / 5 out USD per 1M tokens.
    expect(before.balanceNano - after.balanceNano).toBe((BigInt(usage.prompt_tokens) * 1_000_000_000n + BigInt(usage.completion_tokens) * 5_000_000_000n + 500_000n) / 1_000_000n);
    const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string; body: Record<string, unknown> }>);
    expect(last.path).toBe('/v1/messages');
    expect(last.body).toMatchObject({ model: 'claude-haiku-4-5-20251001', system: 'Be brief.', max_tokens: 4096 });
  });

  it('streams text identically to the JSON answer, usage only when asked', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Stream it' }];
    const json = await client.chat.completions.create({ model: 'claude-haiku-4-5', messages, max_tokens: 40 });
    const stream = await client.chat.completions.create({ model: 'claude-haiku-4-5', messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    const { text, usage } = await collectChatStream(stream);
    expect(text).toBe(json.choices[0]!.message.content);
    expect(usage).toMatchObject({ prompt_tokens: json.usage!.prompt_tokens, completion_tokens: json.usage!.completion_tokens });
  });

  it('streams tool calls with their argument deltas and round-trips tool results', async () => {
    const runner = client.chat.completions.stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'required' });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'sim' });

    const followUp = await client.chat.completions.create({
      model: 'claude-sonnet-4-5', tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21C' },
      ],
    });
    expect(followUp.choices[0]!.finish_reason).toBe('stop');
    const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ body: { messages: Array<{ role: string; content: Array<{ type: string }> }>; tool_choice?: unknown } }>);
    expect(last.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(last.body.messages[1]!.content[0]!.type).toBe('tool_use');
    expect(last.body.messages[2]!.content[0]!.type).toBe('tool_result');
  });

  it('refuses parameters the messages format cannot carry, as declared in the route YAML', async () => {
    await expect(client.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'x' }], logit_bias: { '1': 1 } }))
      .rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'logit_bias' });
    await expect(client.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'x' }], n: 2 }))
      .rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
  });
});
