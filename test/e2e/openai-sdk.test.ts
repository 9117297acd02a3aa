/** The official openai SDK (^6) against a running gateway: chat, stream, tools, models; billing exact. */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// gpt-4o-mini in providers/openai.yaml: input 0.15, output 0.60, cached 0.075 USD per 1M tokens.
function expectedNano(input: number, output: number, cached = 0): bigint {
  const exact = BigInt(input - cached) * 150_000_000n + BigInt(cached) * 75_000_000n + BigInt(output) * 600_000_000n;
  return (exact + 500_000n) / 1_000_000n;
}

describeStore('openai SDK against the gateway', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  it('creates a chat completion and bills its reported usage exactly', async () => {
    const before = (await t.settled(account.id))!;
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.choices[0]!.message.content).toContain('Say hello');
    const usage = completion.usage!;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    const after = (await t.settled(account.id))!;
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(usage.prompt_tokens, usage.completion_tokens));
    expect(after.openHolds).toBe(0);
    const rows = await t.usage(account.id, { limit: 1 });
    expect(rows.data[0]).toMatchObject({ kind: 'tokens', model: 'gpt-4o-mini', quantity: BigInt(usage.total_tokens) });
    expect(rows.data[0]!.details).toMatchObject({ input: usage.prompt_tokens, output: usage.completion_tokens, cached: 0, reasoning: 0 });
  });

  it('streams, bills the stream like the JSON answer, and hides usage unless asked', async () => {
    const messages = [{ role: 'user' as const, content: 'Stream please' }];
    const json = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const before = (await t.settled(account.id))!;
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe(json.choices[0]!.message.content);
    expect(sawUsage).toBe(false);
    const after = (await t.settled(account.id))!;
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(json.usage!.prompt_tokens, json.usage!.completion_tokens));

    const withUsage = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
    let reported: OpenAI.CompletionUsage | undefined;
    for await (const chunk of withUsage) if (chunk.usage) reported = chunk.usage;
    expect(reported?.prompt_tokens).toBe(json.usage!.prompt_tokens);
    expect(reported?.completion_tokens).toBe(json.usage!.completion_tokens);
  });

  it('forwards tools and tool_choice and returns tool calls, streamed and not', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    }];
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'auto' });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ body: { tools: unknown; tool_choice: unknown } }>);
    expect(last.body.tools).toEqual(tools);
    expect(last.body.tool_choice).toBe('auto');

    const runner = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather?' }], tools });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]!.message.tool_calls![0]!;
    expect(streamed.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual({ city: 'sim' });
  });

  it('prices cached prompt tokens at the cached rate', async () => {
    const before = (await t.settled(account.id))!;
    // The simulator reports half the prompt as cached when the request carries a prompt_cache_key.
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cache me please, a long prompt' }], prompt_cache_key: 'k1' });
    const usage = completion.usage!;
    const cached = usage.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThan(0);
    const after = (await t.settled(account.id))!;
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(usage.prompt_tokens, usage.completion_tokens, cached));
    const [row] = (await t.usage(account.id, { limit: 1 })).data;
    expect(row!.details).toMatchObject({ input: usage.prompt_tokens, cached });
  });

  it('passes other standard parameters on to the upstream', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], temperature: 0.2, seed: 7, stop: ['END'], max_tokens: 5, user: 'u1' });
    const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ body: Record<string, unknown> }>);
    expect(last.body).toMatchObject({ temperature: 0.2, seed: 7, stop: ['END'], max_tokens: 5, user: 'u1', model: 'gpt-4o-mini' });
  });

  it('lists and retrieves models, free at zero balance', async () => {
    const broke = await t.account('0');
    const poor = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: broke.key, maxRetries: 0 });
    const ids = [];
    for await (const model of poor.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o-mini', 'gpt-4o']));
    expect(ids).not.toContain('gpt-4.1-codex-preview');
    expect(ids).not.toContain('gpt-3.5-turbo');
    const model = await poor.models.retrieve('gpt-4o-mini');
    expect(model).toMatchObject({ id: 'gpt-4o-mini', object: 'model', owned_by: 'openai' });
    await expect(poor.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    expect((await t.settled(broke.id))!.balanceNano).toBe(0n);
  });

  it('refuses a chat at zero balance with 402 before any upstream call', async () => {
    const broke = await t.account('0');
    const poor = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: broke.key, maxRetries: 0 });
    const before = t.sim.requests;
    await expect(poor.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }))
      .rejects.toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect(t.sim.requests).toBe(before);
    expect(parseUsd('0')).toBe((await t.settled(broke.id))!.balanceNano);
  });
});
