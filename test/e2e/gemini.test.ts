/**
 * The google_ai provider end to end (the Gemini generateContent format behind chat completions,
 * messages and responses): the official openai and anthropic SDKs against the gateway, the simulator
 * as Google AI Studio. The upstream request goes to the model's URL (:generateContent, or
 * :streamGenerateContent?alt=sse when streaming), with the key in x-goog-api-key once it is set, and
 * usage is billed exactly: thoughts tokens as output, cached prompt tokens at the cached price.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { describeStore } from '../helpers/db.js';
import { copyConfig, singleAttempt } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, readSse, settled, type Account, collectChatStream } from '../helpers/chat.js';

/** Nano-USD per 1M tokens, as providers/google-ai.yaml lists them. */
const PRICES = {
  'google-ai-gemini-2.5-flash': { input: 300_000_000n, output: 2_500_000_000n, cached: 30_000_000n },
  'google-ai-gemini-2.5-pro': { input: 1_250_000_000n, output: 10_000_000_000n, cached: 125_000_000n },
} as const;

/** The charge of a request: uncached input, cached input and output at their prices, rounded half up once. */
function price(model: keyof typeof PRICES, u: { input: number; cached: number; output: number }): bigint {
  const p = PRICES[model];
  const exact = BigInt(u.input - u.cached) * p.input + BigInt(u.cached) * p.cached + BigInt(u.output) * p.output;
  return (exact + 500_000n) / 1_000_000n;
}

interface Upstream { path: string; headers: Record<string, string>; body: Record<string, any> }

const tools: OpenAI.ChatCompletionTool[] = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}];

/** A system text over 1,024 tokens: the simulator reports half the prompt as cached (implicit caching). */
const LONG_SYSTEM = 'You answer questions about the weather in a careful and friendly way. '.repeat(120);

describeStore('the google_ai provider (Gemini generateContent)', () => {
  let t: TestGateway;
  let a: Account;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const last = (): Promise<Upstream> => fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<Upstream>);

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  it('answers chat completions on :generateContent and bills thoughts as output', async () => {
    const before = await settled(a);
    const completion = await openai.chat.completions.create({ model: 'google-ai-gemini-2.5-pro', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello Gemini' }] });
    expect(completion.model).toBe('google-ai-gemini-2.5-pro');
    expect(completion.choices[0]!.message.content).toContain('Hello Gemini');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    const usage = completion.usage!;
    // The simulator's thinking model reports 48 thoughts tokens: part of the output, and of the bill.
    expect(usage.completion_tokens_details?.reasoning_tokens).toBe(48);
    expect(usage.completion_tokens).toBeGreaterThan(48);
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(price('google-ai-gemini-2.5-pro', { input: usage.prompt_tokens, cached: 0, output: usage.completion_tokens }));
    const upstream = await last();
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(upstream.body).toEqual({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }] });
  });

  it('streams on :streamGenerateContent?alt=sse, the text as the JSON answer, and bills cached input at its price', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: LONG_SYSTEM }, { role: 'user', content: 'Stream it' }];
    const json = await openai.chat.completions.create({ model: 'google-ai-gemini-2.5-flash', messages, max_tokens: 40 });
    const before = await settled(a);
    const stream = await openai.chat.completions.create({ model: 'google-ai-gemini-2.5-flash', messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    const { text, usage } = await collectChatStream(stream);
    expect(text).toBe(json.choices[0]!.message.content);
    expect(usage).toEqual(json.usage);
    const cached = usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBe(Math.floor(usage!.prompt_tokens / 2));
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(price('google-ai-gemini-2.5-flash', { input: usage!.prompt_tokens, cached, output: usage!.completion_tokens }));
    expect(after.last?.details).toMatchObject({ input: usage!.prompt_tokens, cached, output: usage!.completion_tokens });
    const upstream = await last();
    // The simulator records the path without its query; it streams events only for alt=sse (else one JSON array).
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(upstream.body.generationConfig).toEqual({ maxOutputTokens: 40 });
  });

  it('calls tools (streamed) and round-trips the result as a functionResponse', async () => {
    const runner = openai.chat.completions.stream({ model: 'google-ai-gemini-2.5-flash', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'required' });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'sim' });
    expect((await last()).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });

    const followUp = await openai.chat.completions.create({
      model: 'google-ai-gemini-2.5-flash', tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21C' },
      ],
    });
    expect(followUp.choices[0]!.finish_reason).toBe('stop');
    const upstream = await last();
    expect(upstream.body.contents.map((c: { role: string }) => c.role)).toEqual(['user', 'model', 'user']);
    expect(upstream.body.contents[1].parts[0]).toEqual({ functionCall: { name: 'get_weather', args: { city: 'sim' } } });
    expect(upstream.body.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { content: 'Sunny, 21C' } } });
  });

  it('answers json_schema response formats with JSON that fits the schema', async () => {
    const completion = await openai.chat.completions.create({
      model: 'google-ai-gemini-2.5-flash', messages: [{ role: 'user', content: 'A city and its temperature.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false } } },
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'sim', celsius: 1 });
    expect((await last()).body.generationConfig.responseMimeType).toBe('application/json');
  });

  it('refuses what the format cannot carry before anything is sent', async () => {
    const sent = await fetch(`${t.sim.url}/__sim/stats`).then((r) => r.json() as Promise<{ requests: number }>);
    await expect(openai.chat.completions.create({ model: 'google-ai-gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], n: 2 })).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
    await expect(openai.chat.completions.create({ model: 'google-ai-gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], logprobs: true })).rejects.toMatchObject({ status: 400, param: 'logprobs' });
    const after = await fetch(`${t.sim.url}/__sim/stats`).then((r) => r.json() as Promise<{ requests: number }>);
    expect(after.requests).toBe(sent.requests);
  });

  it('creates messages with the anthropic SDK, cache reads reported apart from input_tokens and billed at the cached price', async () => {
    const before = await settled(a);
    const message = await anthropic.messages.create({ model: 'google-ai-gemini-2.5-flash', max_tokens: 64, system: LONG_SYSTEM, messages: [{ role: 'user', content: 'Hello from messages' }] });
    expect(message.type).toBe('message');
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content[0]!.type === 'text' && message.content[0]!.text).toContain('Hello from messages');
    const u = message.usage;
    expect(u.cache_read_input_tokens).toBeGreaterThan(0);
    const after = await settled(a);
    const input = u.input_tokens + u.cache_read_input_tokens!;
    expect(before.balanceNano - after.balanceNano).toBe(price('google-ai-gemini-2.5-flash', { input, cached: u.cache_read_input_tokens!, output: u.output_tokens }));
    const upstream = await last();
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(upstream.body.generationConfig).toEqual({ maxOutputTokens: 64 });
  });

  it('streams messages and tool use with the anthropic SDK, billed from the final usage', async () => {
    const before = await settled(a);
    const stream = anthropic.messages.stream({ model: 'google-ai-gemini-2.5-pro', max_tokens: 200, messages: [{ role: 'user', content: 'Stream a message' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]!.type === 'text' && final.content[0]!.text).toContain('Stream a message');
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(price('google-ai-gemini-2.5-pro', { input: final.usage.input_tokens, cached: 0, output: final.usage.output_tokens }));
    expect(final.usage.output_tokens).toBeGreaterThan(48);
    expect((await last()).path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent');

    const toolStream = anthropic.messages.stream({
      model: 'google-ai-gemini-2.5-flash', max_tokens: 200, messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], tool_choice: { type: 'any' },
    });
    const withTool = await toolStream.finalMessage();
    expect(withTool.stop_reason).toBe('tool_use');
    const use = withTool.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'sim' } });
  });

  it('answers a responses request through chat (responses -> chat -> Gemini), billed exactly', async () => {
    const before = await settled(a);
    const response = await openai.responses.create({ model: 'google-ai-gemini-2.5-pro', instructions: 'Be brief.', input: 'Hello responses' });
    expect(response.status).toBe('completed');
    expect(response.output_text).toContain('Hello responses');
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(48);
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(price('google-ai-gemini-2.5-pro', { input: response.usage!.input_tokens, cached: 0, output: response.usage!.output_tokens }));
    const upstream = await last();
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(upstream.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
  });
});

describeStore('the google_ai provider with its key set', () => {
  let sim: Simulator;
  let t: TestGateway;

  beforeAll(async () => {
    // A simulator of its own, named by GOOGLE_AI_BASE_URL as a real endpoint would be.
    sim = await startSimulator();
    t = await startTestGateway({ env: { GOOGLE_AI_API_KEY: 'fake-google-ai-key', GOOGLE_AI_BASE_URL: sim.url } });
  });
  afterAll(async () => { await t?.dispose(); await sim?.close(); });

  it('sends the key as x-goog-api-key, never as a bearer token', async () => {
    const a = await t.account('1');
    const openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: 'google-ai-gemini-2.5-flash-lite', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toContain('Hi');
    const upstream = await fetch(`${sim.url}/__sim/last`).then((r) => r.json() as Promise<Upstream>);
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash-lite:generateContent');
    expect(upstream.headers['x-goog-api-key']).toBe('fake-google-ai-key');
    expect(upstream.headers.authorization).toBeUndefined();
  });
});

describeStore('the google_ai provider under upstream faults', () => {
  let t: TestGateway;
  let a: Account;
  const model = 'google-ai-gemini-2.5-flash';
  const chat = (stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'A faulty request that streams a reply of several chunks' }] });

  beforeAll(async () => {
    // What one failed attempt costs: retries and fail-over are test/e2e/routing-*.test.ts.
    const copy = await copyConfig();
    await singleAttempt(copy);
    t = await startTestGateway({ configFile: copy.configFile });
    a = { ...(await t.account('2')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  async function unchanged(run: () => Promise<void>): Promise<void> {
    const before = await settled(a);
    await run();
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
  }

  it('an upstream 500 or an error-only stream is a 502, nothing charged; a 429 stays a 429', async () => {
    for (const fault of [{ status: 500, times: 1 }, { error_after_chunks: 0, times: 1 }]) {
      await t.fault(fault, 'gemini-2.5-flash');
      await unchanged(async () => {
        const res = await postChat(a, chat(true));
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject({ error: { code: 'upstream_error' } });
      });
    }
    await t.fault({ status: 429, times: 1 }, 'gemini-2.5-flash');
    await unchanged(async () => {
      const res = await postChat(a, chat(false));
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: { code: 'upstream_rate_limited' } });
    });
  });

  it('a prompt over the model\'s limit is context_length_exceeded, nothing charged', async () => {
    await t.fault({ status: 400, error_code: 'context_length_exceeded', times: 1 }, 'gemini-2.5-flash');
    await unchanged(async () => {
      const res = await postChat(a, chat(false));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'context_length_exceeded' } });
    });
  });

  it('a stream cut after content ends with an error event and pays input plus the output delivered', async () => {
    await t.fault({ truncate_after_chunks: 2, times: 1 }, 'gemini-2.5-flash');
    const before = await settled(a);
    const read = await readSse(await postChat(a, chat(true)));
    expect(read.text.length).toBeGreaterThan(0);
    expect(read.errors).toHaveLength(1);
    expect(read.done).toBe(false);
    const after = await settled(a);
    expect(after.rows).toBe(before.rows + 1);
    const details = after.last!.details as { input: number; output: number; counted_by?: string };
    expect(details.counted_by).toBe('gateway_tokenizer');
    expect(details.output).toBeGreaterThan(0);
    expect(after.last!.amountNano).toBeGreaterThan(0n);
  });

  it('an answer without usageMetadata is billed the gateway\'s count, never zero', async () => {
    await t.fault({ omit_usage: true, times: 1 }, 'gemini-2.5-flash');
    const before = await settled(a);
    const res = await postChat(a, chat(false));
    expect(res.status).toBe(200);
    const after = await settled(a);
    expect(after.rows).toBe(before.rows + 1);
    expect(after.last!.details).toMatchObject({ counted_by: 'gateway_tokenizer' });
    expect(before.balanceNano - after.balanceNano).toBeGreaterThan(0n);
  });
});
