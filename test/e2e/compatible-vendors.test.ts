/**
 * The OpenAI-compatible vendors by YAML alone (issue 32 item 1): Azure OpenAI, Gemini, Mistral, Groq,
 * DeepSeek, xAI, OpenRouter, vLLM and Ollama, each played by a loopback fake that checks what the
 * gateway sent. Through the official openai SDK: a chat, a stream and a tool call on each, billed
 * exactly from what the vendor reported (in its own usage dialect), or estimated and marked so when it
 * reported none; each vendor's declared refusals are 400s with nothing sent and nothing charged.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { FAKE_PIECES, FAKE_USAGE, fakeVendors, startCompatibleFake, type CompatibleFake, type FakeVendor } from '../helpers/compatible-fake.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const VENDORS = fakeVendors();

/** The charge for `input` tokens (`cached` of them from the cache) and `output`, at the vendor's prices. */
function chargeNano(v: FakeVendor, input: number, output: number, cached: number): bigint {
  const perToken = (usd: string) => parseUsd(usd); // USD per 1M tokens = nano-USD per 1M; divided below
  const cachedPrice = perToken(v.prices.cached ?? v.prices.input);
  const exact = BigInt(input - cached) * perToken(v.prices.input) + BigInt(cached) * cachedPrice + BigInt(output) * perToken(v.prices.output);
  return (exact + 500_000n) / 1_000_000n;
}

/** What the vendor's answers are billed: its reported counts (none reported: the row's own estimate). */
function reportedCharge(v: FakeVendor): bigint {
  return chargeNano(v, FAKE_USAGE.input, FAKE_USAGE.output, FAKE_USAGE.cached);
}

describeStore('OpenAI-compatible vendors by YAML alone', () => {
  let fake: CompatibleFake;
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startCompatibleFake(VENDORS);
    t = await startTestGateway({ env: fake.env(VENDORS) });
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); await fake?.close(); });

  /** The newest usage row, once the charge is posted. */
  async function lastRow() {
    await t.settled(account.id);
    return (await t.usage(account.id, { limit: 1 })).data[0]!;
  }

  /** Checks the request the fake got last: the vendor's path, its auth header, the upstream model. */
  function checkSent(v: FakeVendor): Record<string, unknown> {
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(v.path);
    const [header, value] = v.auth;
    if (value === null) expect(sent.headers[header]).toBeUndefined();
    else expect(sent.headers[header]).toBe(value);
    expect(sent.body.model).toBe(v.upstream);
    return sent.body;
  }

  /** The row bills the vendor's counts, or (no usage reported) the gateway's estimate, marked. */
  function checkBilled(v: FakeVendor, row: Awaited<ReturnType<typeof lastRow>>): void {
    expect(row.model).toBe(v.model);
    const details = row.details as { input: number; output: number; cached: number; estimated?: boolean };
    if (v.usage === 'none') {
      expect(details.estimated).toBe(true);
      expect(details.output).toBeGreaterThan(0);
      expect(row.amountNano).toBeGreaterThan(0n);
      expect(row.amountNano).toBe(chargeNano(v, details.input, details.output, 0));
      return;
    }
    expect(details.estimated).toBeUndefined();
    expect(details).toMatchObject({ input: FAKE_USAGE.input, output: FAKE_USAGE.output, cached: FAKE_USAGE.cached });
    expect(row.amountNano).toBe(reportedCharge(v));
  }

  for (const v of VENDORS) {
    describe(v.provider, () => {
      it(`chat on ${v.model}: the vendor's path, auth and model; billed`, async () => {
        const completion = await client.chat.completions.create({ model: v.model, messages: [{ role: 'user', content: 'Say hello' }] });
        expect(completion.model).toBe(v.model);
        expect(completion.choices[0]!.message.content).toBe(FAKE_PIECES.join(''));
        const body = checkSent(v);
        expect(body.stream).toBeUndefined();
        checkBilled(v, await lastRow());
      });

      it(`stream on ${v.model}: usage asked for as the vendor takes it; billed like the JSON answer`, async () => {
        const stream = await client.chat.completions.create({ model: v.model, messages: [{ role: 'user', content: 'Stream please' }], stream: true });
        let text = '';
        let sawUsage = false;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? '';
          if (chunk.usage) sawUsage = true;
        }
        expect(text).toBe(FAKE_PIECES.join(''));
        // The client did not ask for usage: whatever the vendor sent, it does not see it.
        expect(sawUsage).toBe(false);
        const body = checkSent(v);
        if (v.usage === 'always') expect(body.stream_options).toBeUndefined();
        else expect(body.stream_options).toEqual({ include_usage: true });
        checkBilled(v, await lastRow());
      });

      it(`tool call on ${v.model}: the tool reaches the vendor, the call comes back; billed`, async () => {
        const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
        const completion = await client.chat.completions.create({ model: v.model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools });
        const call = completion.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
        expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
        expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
        const body = checkSent(v);
        expect(body.tools).toEqual(tools);
        checkBilled(v, await lastRow());
      });
    });
  }

  it('DeepSeek: cache hits under its own name are priced as cached input; reasoning_content reaches the client', async () => {
    const v = VENDORS.find((x) => x.provider === 'deepseek')!;
    const completion = await client.chat.completions.create({ model: v.model, messages: [{ role: 'user', content: 'Think' }] });
    expect((completion.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe('Thinking it over.');
    const row = await lastRow();
    expect(row.details).toMatchObject({ cached: FAKE_USAGE.cached, reasoning: FAKE_USAGE.reasoning });
    // 70 uncached at 0.28 + 30 cached at 0.028 + 20 output at 0.42 (USD per 1M tokens).
    expect(row.amountNano).toBe(70n * 280n + 30n * 28n + 20n * 420n);
  });

  it.each(['mistral', 'deepseek'])('%s on POST /v1/responses, JSON and streamed: its dialect holds through the responses translation', async (provider) => {
    const v = VENDORS.find((x) => x.provider === provider)!;
    const response = await client.responses.create({ model: v.model, input: 'Say hello' });
    expect(response.output_text).toBe(FAKE_PIECES.join(''));
    checkSent(v);
    checkBilled(v, await lastRow());
    let text = '';
    for await (const event of await client.responses.create({ model: v.model, input: 'Say hello', stream: true })) {
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe(FAKE_PIECES.join(''));
    const body = checkSent(v);
    if (v.usage === 'always') expect(body.stream_options).toBeUndefined();
    else expect(body.stream_options).toEqual({ include_usage: true });
    checkBilled(v, await lastRow());
  });

  it.each([
    ['groq', { n: 2 }, 'n'],
    ['mistral', { seed: 7 }, 'seed'],
    ['xai', { stop: ['END'] }, 'stop'],
    ['deepseek', { logprobs: true }, 'logprobs'],
  ] as const)('%s refuses %j with a 400 naming it, nothing sent or charged', async (provider, extra, param) => {
    const v = VENDORS.find((x) => x.provider === provider)!;
    const sentBefore = fake.requests.length;
    const before = (await t.settled(account.id))!;
    const body = { model: v.model, messages: [{ role: 'user', content: 'Hi' }], ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const error = await client.chat.completions.create(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
    expect(fake.requests.length).toBe(sentBefore);
    expect((await t.settled(account.id))!.balanceNano).toBe(before.balanceNano);
  });
});

describeStore('OpenAI-compatible vendors, unconfigured: the built-in simulator plays each', () => {
  let t: TestGateway;
  let account: { id: string; key: string };
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTestGateway();
    account = await t.account('5');
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: account.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  const hosted = VENDORS.filter((v) => !['vllm', 'ollama'].includes(v.provider));
  it.each(hosted.map((v) => [v.provider, v.model] as const))('%s (%s): a chat and a stream, both billed from the simulator\'s usage', async (_provider, model) => {
    const messages = [{ role: 'user' as const, content: 'Hello there' }];
    const completion = await client.chat.completions.create({ model, messages, max_tokens: 16 });
    expect(completion.choices[0]!.message.content).toBeTruthy();
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model, messages, max_tokens: 16, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(completion.choices[0]!.message.content);
    await t.settled(account.id);
    const [streamed, json] = (await t.usage(account.id, { limit: 2 })).data;
    for (const row of [streamed!, json!]) {
      expect(row.model).toBe(model);
      expect(row.amountNano).toBeGreaterThan(0n);
      expect((row.details as { estimated?: boolean }).estimated).toBeUndefined();
    }
    expect(streamed!.amountNano).toBe(json!.amountNano);
  });
});
