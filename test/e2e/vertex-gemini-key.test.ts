/**
 * Gemini on Vertex AI with a service-account key file (issue 32 item 3), as test/e2e/vertex.test.ts
 * does it for Claude: a loopback simulator plays Vertex and Google's token endpoint and registered
 * the throwaway account, so it takes only the tokens it issued. Through chat completions (JSON,
 * stream, a tool call streamed and not), messages (JSON, stream, tool use) and responses: the
 * generate-content path under publishers/google at the project and location, `alt=sse` for streams,
 * no `model` in the body, the issued bearer token. Each request billed exactly from the
 * usageMetadata the simulator answered (recomputed here from the body it received): prompt,
 * candidates, cached and thoughts tokens, thoughts as output, cached input at the cached price; the
 * expected charge from the usage row and the offering's prices as providers/vertex.yaml lists them.
 * The token: one for all, a refused one (401) dropped and fetched anew, a token endpoint failure a
 * clean 502 with nothing charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseUsd } from '../../src/money.js';
import { projectRoot } from '../../src/paths.js';
import { answerGemini, validateGeminiRequest, type SimGeminiAnswer } from '../../src/sim/gemini.js';
import { settled, type Account, collectChatStream } from '../helpers/chat.js';
import { describeStore } from '../helpers/db.js';
import { postJson, startLiveVertex, VERTEX_LOCATION, VERTEX_PROJECT, type LiveVertex, type SimLast } from '../helpers/vertex.js';

/** The two Gemini offerings of providers/vertex.yaml and their upstream models. */
const PRO = { id: 'vertex-gemini-2.5-pro', upstream: 'gemini-2.5-pro' } as const;
const FLASH = { id: 'vertex-gemini-2.5-flash', upstream: 'gemini-2.5-flash' } as const;
type Offering = typeof PRO | typeof FLASH;

/** A system text over 1,024 tokens: the simulator reports half the prompt as cached (implicit caching). */
const LONG_SYSTEM = 'You answer questions about the weather in a careful and friendly way. '.repeat(120);

const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_PARAMETERS } }];

/** An offering's token prices as providers/vertex.yaml lists them, in nano-USD per `per` tokens (cached input unpriced: the input price). */
interface Prices { per: bigint; input: bigint; output: bigint; cached: bigint }

async function pricesOf(id: string): Promise<Prices> {
  const doc = parse(await readFile(join(projectRoot(), 'providers/vertex.yaml'), 'utf8')) as { offerings: Array<{ id: string; billing: { per: number; prices: Record<string, string> } }> };
  const billing = doc.offerings.find((o) => o.id === id)!.billing;
  const input = parseUsd(billing.prices.input!);
  return { per: BigInt(billing.per), input, output: parseUsd(billing.prices.output!), cached: billing.prices.cached_input === undefined ? input : parseUsd(billing.prices.cached_input) };
}

/** The usageMetadata the simulator answered to the body it received (its answer is a function of the body). */
function answeredUsage(sent: SimLast, upstream: string): SimGeminiAnswer['usage'] {
  const valid = validateGeminiRequest(sent.body);
  if (!valid.ok) throw new Error(`the simulator refused the body: ${valid.message}`);
  return answerGemini(valid.value, upstream, JSON.stringify(sent.body)).usage;
}

/** The Vertex path of a generate-content method for an upstream model. */
const vertexPath = (upstream: string, method: 'generateContent' | 'streamGenerateContent'): string =>
  `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google/models/${upstream}:${method}`;

describeStore('Gemini on Vertex AI with a service-account key file', () => {
  let v: LiveVertex;
  let a: Account;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const prices = new Map<string, Prices>();

  beforeAll(async () => {
    v = await startLiveVertex();
    a = { ...(await v.t.account('5')), t: v.t };
    openai = new OpenAI({ baseURL: `${v.t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: v.t.url, apiKey: a.key, maxRetries: 0 });
    for (const o of [PRO, FLASH]) prices.set(o.id, await pricesOf(o.id));
  });
  afterAll(async () => { await v?.dispose(); });

  /** Checks the last upstream request: the path form, alt=sse when streaming, the issued token, no model or stream in the body. */
  async function expectSent(o: Offering, stream: boolean): Promise<SimLast> {
    const sent = await v.last();
    expect(sent.path).toBe(vertexPath(o.upstream, stream ? 'streamGenerateContent' : 'generateContent'));
    expect(sent.query).toBe(stream ? 'alt=sse' : '');
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.sim-[0-9a-f]{24}$/);
    expect(sent.headers['x-goog-api-key']).toBeUndefined();
    expect(sent.body).not.toHaveProperty('model');
    expect(sent.body).not.toHaveProperty('stream');
    return sent;
  }

  /**
   * Checks the one usage row the request since `before` wrote against the usageMetadata the simulator
   * answered to `sent`, and its charge against the row's counts at the offering's prices; returns the usage.
   */
  async function expectBilled(before: Awaited<ReturnType<typeof settled>>, o: Offering, sent: SimLast): Promise<SimGeminiAnswer['usage']> {
    const usage = answeredUsage(sent, o.upstream);
    const after = await settled(a);
    expect(after.rows).toBe(before.rows + 1);
    const row = after.last!;
    const thoughts = usage.thoughtsTokenCount ?? 0;
    const cached = usage.cachedContentTokenCount ?? 0;
    expect(row.details).toMatchObject({ input: usage.promptTokenCount, cached, output: usage.candidatesTokenCount + thoughts, reasoning: thoughts, cache_write: 0 });
    expect(row.details).not.toHaveProperty('estimated');
    const p = prices.get(o.id)!;
    const d = row.details as { input: number; cached: number; output: number };
    const exact = BigInt(d.input - d.cached) * p.input + BigInt(d.cached) * p.cached + BigInt(d.output) * p.output;
    expect(row.amountNano).toBe((exact + p.per / 2n) / p.per);
    expect(before.balanceNano - after.balanceNano).toBe(row.amountNano);
    return usage;
  }

  it('chat completions: generateContent with the issued bearer token; prompt, cached and thoughts tokens billed exactly', async () => {
    // The simulator's check is live: a token it did not issue is refused.
    const forged = await request(`${v.vertex.url}${vertexPath(PRO.upstream, 'generateContent')}`, {
      method: 'POST', headers: { authorization: 'Bearer ya29.sim-forged', 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    await forged.body.text();
    expect(forged.statusCode).toBe(401);

    const before = await settled(a);
    const completion = await openai.chat.completions.create({ model: PRO.id, max_tokens: 64, messages: [{ role: 'system', content: LONG_SYSTEM }, { role: 'user', content: 'Hello Gemini on Vertex' }] });
    expect(completion.model).toBe(PRO.id);
    expect(completion.choices[0]!.message.content).toContain('Hello Gemini on Vertex');
    const sent = await expectSent(PRO, false);
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: LONG_SYSTEM }] });
    expect(sent.body.generationConfig).toEqual({ maxOutputTokens: 64 });
    const usage = await expectBilled(before, PRO, sent);
    expect(usage.thoughtsTokenCount).toBe(48);
    expect(usage.cachedContentTokenCount).toBe(Math.floor(usage.promptTokenCount / 2));
    expect(completion.usage).toMatchObject({
      prompt_tokens: usage.promptTokenCount, completion_tokens: usage.candidatesTokenCount + 48,
      prompt_tokens_details: { cached_tokens: usage.cachedContentTokenCount }, completion_tokens_details: { reasoning_tokens: 48 },
    });
  });

  it('chat completions streamed: streamGenerateContent?alt=sse, the text of the JSON answer, billed from the final usageMetadata', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: LONG_SYSTEM }, { role: 'user', content: 'Stream from Vertex' }];
    const json = await openai.chat.completions.create({ model: FLASH.id, messages, max_tokens: 40 });
    const before = await settled(a);
    const stream = await openai.chat.completions.create({ model: FLASH.id, messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    const { text, usage } = await collectChatStream(stream);
    expect(text).toBe(json.choices[0]!.message.content);
    const billed = await expectBilled(before, FLASH, await expectSent(FLASH, true));
    expect(billed.cachedContentTokenCount).toBeGreaterThan(0);
    expect(billed.thoughtsTokenCount).toBeUndefined(); // flash does not think unless asked
    expect(usage).toMatchObject({ prompt_tokens: billed.promptTokenCount, completion_tokens: billed.candidatesTokenCount });
  });

  it('chat completions with a tool, not streamed and streamed: the call and its arguments; billed', async () => {
    for (const stream of [false, true]) {
      const before = await settled(a);
      const params = { model: PRO.id, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }], tools, tool_choice: 'required' as const };
      const final = stream
        ? await openai.chat.completions.stream({ ...params, stream_options: { include_usage: true } }).finalChatCompletion()
        : await openai.chat.completions.create(params);
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      const call = final.choices[0]!.message.tool_calls![0]!;
      expect(call.type === 'function' && call.function.name).toBe('get_weather');
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'sim' });
      const sent = await expectSent(PRO, stream);
      expect(sent.body.tools).toEqual([{ functionDeclarations: [expect.objectContaining({ name: 'get_weather', description: 'Weather of a city' })] }]);
      expect(sent.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
      const usage = await expectBilled(before, PRO, sent);
      expect(usage.thoughtsTokenCount).toBe(48);
    }
  });

  it('messages (anthropic SDK): the answer in the client model, cache reads apart from input_tokens; billed exactly', async () => {
    const before = await settled(a);
    const message = await anthropic.messages.create({ model: PRO.id, max_tokens: 64, system: LONG_SYSTEM, messages: [{ role: 'user', content: 'Hello from messages' }] });
    expect(message.model).toBe(PRO.id);
    expect(message.content[0]!.type === 'text' && message.content[0]!.text).toContain('Hello from messages');
    const sent = await expectSent(PRO, false);
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: LONG_SYSTEM }] });
    const usage = await expectBilled(before, PRO, sent);
    expect(usage.cachedContentTokenCount).toBeGreaterThan(0);
    expect(message.usage).toMatchObject({
      input_tokens: usage.promptTokenCount - usage.cachedContentTokenCount!, cache_read_input_tokens: usage.cachedContentTokenCount,
      output_tokens: usage.candidatesTokenCount + usage.thoughtsTokenCount!,
    });
  });

  it('messages streamed (anthropic SDK): alt=sse, the final message as the JSON one; billed', async () => {
    const params = { model: PRO.id, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Stream Gemini on Vertex' }] };
    const json = await anthropic.messages.create(params);
    const before = await settled(a);
    const final = await anthropic.messages.stream(params).finalMessage();
    expect(final.content).toEqual(json.content);
    const usage = await expectBilled(before, PRO, await expectSent(PRO, true));
    expect(final.usage).toMatchObject({ input_tokens: usage.promptTokenCount, output_tokens: usage.candidatesTokenCount + usage.thoughtsTokenCount! });
  });

  it('messages with tool use (anthropic SDK, streamed): the tool_use block and its input; billed', async () => {
    const before = await settled(a);
    const final = await anthropic.messages.stream({
      model: FLASH.id, max_tokens: 200, tool_choice: { type: 'any' },
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_PARAMETERS as Anthropic.Tool.InputSchema }],
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
    }).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.find((b) => b.type === 'tool_use')).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'sim' } });
    const sent = await expectSent(FLASH, true);
    expect(sent.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    await expectBilled(before, FLASH, sent);
  });

  it('responses: through chat to generateContent; reasoning and cached tokens billed exactly', async () => {
    const before = await settled(a);
    const response = await openai.responses.create({ model: PRO.id, instructions: LONG_SYSTEM, input: 'Hello responses', max_output_tokens: 60 });
    expect(response.status).toBe('completed');
    expect(response.output_text).toContain('Hello responses');
    const sent = await expectSent(PRO, false);
    expect(sent.body.generationConfig).toEqual({ maxOutputTokens: 60 });
    const usage = await expectBilled(before, PRO, sent);
    expect(response.usage).toMatchObject({
      input_tokens: usage.promptTokenCount, input_tokens_details: { cached_tokens: usage.cachedContentTokenCount },
      output_tokens: usage.candidatesTokenCount + 48, output_tokens_details: { reasoning_tokens: 48 },
    });
  });

  it('fetched one access token for all of the above (cached)', async () => {
    expect(await v.sa.tokenRequests()).toBe(1);
  });

  it('a token Vertex refuses (401) is dropped, not the key file: the next request fetches a new one and is served', async () => {
    await openai.chat.completions.create({ model: FLASH.id, max_tokens: 20, messages: [{ role: 'user', content: 'accepted' }] });
    const fetched = await v.sa.tokenRequests();
    const refusedToken = (await v.last()).headers.authorization;
    await v.fault(FLASH.upstream, { status: 401, times: 1 });
    const before = await settled(a);
    const refused = await openai.chat.completions.create({ model: FLASH.id, max_tokens: 20, messages: [{ role: 'user', content: 'refused' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(await v.sa.tokenRequests()).toBe(fetched);
    expect((await settled(a)).balanceNano).toBe(before.balanceNano);
    const served = await openai.chat.completions.create({ model: FLASH.id, max_tokens: 20, messages: [{ role: 'user', content: 'served' }] });
    expect(served.choices[0]!.message.content).toBeTruthy();
    expect(await v.sa.tokenRequests()).toBe(fetched + 1);
    expect((await v.last()).headers.authorization).not.toBe(refusedToken);
  });

  it('a token endpoint failure is a clean 502 in each client format, nothing sent to Vertex, nothing charged', async () => {
    expect(await v.t.gw.reload()).toBeNull(); // no token cached: each request must fetch one
    await v.failTokens(500);
    const before = await settled(a);
    const sentBefore = (await v.requests(PRO.upstream)).length;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) => postJson(v.t, a.key, path, body, headers);
    try {
      const chat = await post('/v1/chat/completions', { model: PRO.id, messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.status).toBe(502);
      expect(chat.body.error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('access token') });
      const streamed = await post('/v1/chat/completions', { model: PRO.id, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(streamed.status).toBe(502);
      expect(streamed.body.error.code).toBe('upstream_error');
      const responses = await post('/v1/responses', { model: PRO.id, input: 'hi' });
      expect(responses.status).toBe(502);
      expect(responses.body.error).toMatchObject({ code: 'upstream_error' });
      const messages = await post('/v1/messages', { model: PRO.id, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
      expect(messages.status).toBe(502);
      expect(messages.body).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('access token') } });
      expect(JSON.stringify([chat, streamed, responses, messages])).not.toContain(v.sa.path);
    } finally {
      await v.clearFaults();
    }
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
    expect((await v.requests(PRO.upstream)).length).toBe(sentBefore);
  });
});
