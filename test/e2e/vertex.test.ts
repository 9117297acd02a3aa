/**
 * Claude on Google Vertex AI (issue 32 item 3) end to end: a simulator plays Vertex and Google's token
 * endpoint, the gateway authenticates with a throwaway service account (a key pair generated at run
 * time). Through the official openai SDK (chat, stream, tool call, responses) and @anthropic-ai/sdk
 * (messages, stream, tool use; the ordinary client, which talks to the gateway): Vertex's URL and
 * dialect (anthropic_version in the body, no model: golden fixtures), the bearer token, exact
 * billing. The token: fetched once and cached, an expired one refreshed once for many waiting
 * requests, a token endpoint failure a clean 502 in each client format with nothing charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { projectRoot } from '../../src/paths.js';
import { settled, type Account, collectChatStream } from '../helpers/chat.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { TestServiceAccount } from '../helpers/service-account.js';
import { postJson, startLiveVertex, type LiveVertex } from '../helpers/vertex.js';

const MODEL = 'vertex-claude-sonnet-4-5';
const VERTEX_PATH = '/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929';
// providers/vertex.yaml, vertex-claude-sonnet-4-5: USD per 1M tokens.
const PRICES = { input: parseUsd('3'), output: parseUsd('15'), cacheRead: parseUsd('0.30'), cacheWrite: parseUsd('3.75') };

/** The charge of a messages-format usage (input excludes the cache counters), rounded once. */
function charge(u: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null }): bigint {
  const exact = BigInt(u.input_tokens) * PRICES.input + BigInt(u.output_tokens) * PRICES.output
    + BigInt(u.cache_read_input_tokens ?? 0) * PRICES.cacheRead + BigInt(u.cache_creation_input_tokens ?? 0) * PRICES.cacheWrite;
  return (exact + 500_000n) / 1_000_000n;
}

/** The charge of an OpenAI-shaped usage without cached tokens. */
const chatCharge = (input: number, output: number): bigint => charge({ input_tokens: input, output_tokens: output });

const fixture = async (name: string): Promise<unknown> => JSON.parse(await readFile(join(projectRoot(), 'test/fixtures/vertex', name), 'utf8'));

const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tools: OpenAI.ChatCompletionTool[] = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_PARAMETERS },
}];

describeStore('Claude on Vertex AI', () => {
  let v: LiveVertex;
  let sa: TestServiceAccount;
  let t: TestGateway;
  let a: Account;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    v = await startLiveVertex();
    ({ sa, t } = v);
    a = { ...(await t.account('5')), t };
    openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await v?.dispose(); });

  /** What the Vertex simulator received last. */
  const last = () => v.last();

  /** The Vertex requests (not token exchanges) the simulator logged. */
  const predictions = async () => (await v.requests('claude-sonnet-4-5@20250929')).length;

  it('chat completions: rawPredict at the project and location, the dialect body (golden), the bearer token; billed exactly', async () => {
    const before = await settled(a);
    const completion = await openai.chat.completions.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello Vertex' }] });
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]!.message.content).toContain('Hello');
    const sent = await last();
    expect(sent.path).toBe(`${VERTEX_PATH}:rawPredict`);
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\.sim-/);
    expect(sent.headers['anthropic-version']).toBeUndefined();
    expect(sent.body).toEqual(await fixture('chat-upstream-request.json'));
    const after = await settled(a);
    expect((await t.usage(a.id, { limit: 1 })).data[0]!.model).toBe(MODEL);
    expect(before.balanceNano - after.balanceNano).toBe(chatCharge(completion.usage!.prompt_tokens, completion.usage!.completion_tokens));
  });

  it('chat completions streamed: streamRawPredict, the same text, billed from the usage', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Stream from Vertex' }];
    const json = await openai.chat.completions.create({ model: MODEL, messages, max_tokens: 40 });
    const before = await settled(a);
    const stream = await openai.chat.completions.create({ model: MODEL, messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    const { text, usage } = await collectChatStream(stream);
    expect(text).toBe(json.choices[0]!.message.content);
    const sent = await last();
    expect(sent.path).toBe(`${VERTEX_PATH}:streamRawPredict`);
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
    expect(sent.body.model).toBeUndefined();
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(chatCharge(usage!.prompt_tokens, usage!.completion_tokens));
  });

  it('chat completions with a tool: the call and its arguments, streamed, billed', async () => {
    const before = await settled(a);
    const runner = openai.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'required', stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toHaveProperty('city');
    expect((await last()).body.tools).toEqual([{ name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_PARAMETERS }]);
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(chatCharge(final.usage!.prompt_tokens, final.usage!.completion_tokens));
  });

  it('responses: a request reaches rawPredict through chat; billed exactly', async () => {
    const before = await settled(a);
    const response = await openai.responses.create({ model: MODEL, input: 'Hello from responses', max_output_tokens: 60 });
    expect(response.status).toBe('completed');
    expect(response.output_text).toContain('Hello');
    const sent = await last();
    expect(sent.path).toBe(`${VERTEX_PATH}:rawPredict`);
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 60 });
    expect(sent.body.model).toBeUndefined();
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(chatCharge(response.usage!.input_tokens, response.usage!.output_tokens));
  });

  it('messages (anthropic SDK): the dialect body (golden), the answer in the client model; billed exactly', async () => {
    const before = await settled(a);
    const message = await anthropic.messages.create({ model: MODEL, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claude on Vertex' }] });
    expect(message.type).toBe('message');
    expect(message.model).toBe(MODEL);
    expect(message.content[0]).toMatchObject({ type: 'text' });
    const sent = await last();
    expect(sent.path).toBe(`${VERTEX_PATH}:rawPredict`);
    expect(sent.body).toEqual(await fixture('messages-upstream-request.json'));
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(charge(message.usage));
    expect(after.last?.details).toMatchObject({ input: message.usage.input_tokens, output: message.usage.output_tokens });
  });

  it('messages streamed (anthropic SDK): streamRawPredict, the final message as the JSON one, billed', async () => {
    const params = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Stream Claude on Vertex' }] };
    const json = await anthropic.messages.create(params);
    const before = await settled(a);
    const final = await anthropic.messages.stream(params).finalMessage();
    expect(final.content).toEqual(json.content);
    expect(final.usage).toMatchObject({ input_tokens: json.usage.input_tokens, output_tokens: json.usage.output_tokens });
    expect((await last()).path).toBe(`${VERTEX_PATH}:streamRawPredict`);
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(charge(final.usage));
  });

  it('messages with tool use (anthropic SDK, streamed): the tool_use block and its input; billed', async () => {
    const before = await settled(a);
    const final = await anthropic.messages.stream({
      model: MODEL, max_tokens: 200, tool_choice: { type: 'any' },
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
    }).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    expect((use as Anthropic.ToolUseBlock).input).toHaveProperty('city');
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(charge(final.usage));
  });

  it('fetched one access token for all of the above (cached)', async () => {
    expect(await sa.tokenRequests()).toBe(1);
  });

  it('a token Vertex refuses (401) is dropped, not the key file: the next request fetches a new one and is served', async () => {
    await openai.chat.completions.create({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'accepted' }] });
    const fetched = await sa.tokenRequests();
    const refusedToken = (await last()).headers.authorization;
    await v.fault('claude-sonnet-4-5@20250929', { status: 401, times: 1 });
    const refused = await openai.chat.completions.create({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'refused' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(await sa.tokenRequests()).toBe(fetched);
    const served = await openai.chat.completions.create({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'served' }] });
    expect(served.choices[0]!.message.content).toBeTruthy();
    expect(await sa.tokenRequests()).toBe(fetched + 1);
    expect((await last()).headers.authorization).not.toBe(refusedToken);
  });

  it('refreshes an expired token once for many requests waiting on it', async () => {
    await sa.configure({ expiresIn: 30 }); // shorter than the refresh margin: stale as soon as fetched
    expect(await t.gw.reload()).toBeNull(); // a new configuration starts with no token
    await openai.chat.completions.create({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'one' }] });
    const fetched = await sa.tokenRequests();
    await sa.configure({ expiresIn: 3600, hold: true });
    const deployment = t.gw.generation().gateway.offerings.get(MODEL)!.deployments[0]!;
    const n = 6;
    const waiting = Array.from({ length: n }, (_, i) => openai.chat.completions.create({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: `waiting ${i}` }] }));
    // Every request is in its upstream attempt (waiting for the token) before the token endpoint answers.
    while (t.gw.runtime.deployments.inflight(deployment) < n) await new Promise((resolve) => setImmediate(resolve));
    while ((await sa.tokenRequests()) < fetched + 1) await new Promise((resolve) => setImmediate(resolve));
    const released = await request(`${v.vertex.url}/__sim/release`, { method: 'POST' }).then((r) => r.body.json() as Promise<{ released: number }>);
    expect(released.released).toBe(1);
    const answers = await Promise.all(waiting);
    expect(answers.every((c) => c.choices[0]!.message.content)).toBe(true);
    expect(await sa.tokenRequests()).toBe(fetched + 1);
    await sa.configure({ expiresIn: 3600, hold: false });
  });

  it('a token endpoint failure is a clean 502 in each client format, nothing sent to Vertex, nothing charged', async () => {
    expect(await t.gw.reload()).toBeNull(); // no token cached: each request must fetch one
    await v.failTokens(500);
    const before = await settled(a);
    const sentBefore = await predictions();
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) => postJson(t, a.key, path, body, headers);
    try {
      const chat = await post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.status).toBe(502);
      expect(chat.body.error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('access token') });
      const streamed = await post('/v1/chat/completions', { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(streamed.status).toBe(502);
      expect(streamed.body.error.code).toBe('upstream_error');
      const responses = await post('/v1/responses', { model: MODEL, input: 'hi' });
      expect(responses.status).toBe(502);
      expect(responses.body.error).toMatchObject({ code: 'upstream_error' });
      const messages = await post('/v1/messages', { model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
      expect(messages.status).toBe(502);
      expect(messages.body).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('access token') } });
      expect(JSON.stringify([chat, responses, messages])).not.toContain(sa.path);
    } finally {
      await v.clearFaults();
    }
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
    expect(await predictions()).toBe(sentBefore);
  });
});

describeStore('Claude on Vertex AI, keyless', () => {
  let t: TestGateway;
  let a: Account;
  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
  });
  afterAll(async () => { await t?.dispose(); });

  it('is served by the built-in simulator while GOOGLE_APPLICATION_CREDENTIALS is unset, with no token', async () => {
    const before = await settled(a);
    const message = await new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 }).messages.create({ model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'Hello keyless' }] });
    expect(message.model).toBe(MODEL);
    const sent = await request(`${t.sim.url}/__sim/last`).then((r) => r.body.json() as Promise<{ path: string; headers: Record<string, string> }>);
    expect(sent.path).toBe('/v1/projects/simulated/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
    expect(sent.headers.authorization).toBeUndefined();
    const after = await settled(a);
    expect(before.balanceNano - after.balanceNano).toBe(charge(message.usage));
  });
});
