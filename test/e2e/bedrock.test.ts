/**
 * AWS Bedrock end to end (issue 32 item 2): the gateway signs every Converse and ConverseStream request
 * with SigV4 and the simulator checks the signature; the official openai SDK (chat, stream, tool call,
 * responses) and @anthropic-ai/sdk (messages, stream, tool use) reach Bedrock offerings, each answer
 * billed exactly from the usage Bedrock reported (the stream's `metadata` event; cache reads and writes
 * at their own prices). A wrong secret is the vendor's 403, a 502 to the client with nothing charged; a
 * frame failing its CRC, or an exception frame, mid-stream ends the client's stream with a clean error.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { SIMULATOR_AWS_CREDENTIALS } from '../../src/upstream/sigv4-auth.js';
import { postChat, readSse, settled, type Account, collectChatStream } from '../helpers/chat.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SONNET = { id: 'bedrock-claude-sonnet-4-5', upstream: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', prices: { input: '3', output: '15', cached: '0.30', write: '3.75' } };
const NOVA = { id: 'bedrock-nova-lite', upstream: 'us.amazon.nova-lite-v1:0', prices: { input: '0.06', output: '0.24', cached: '0.015', write: '0.06' } };
type Offering = typeof SONNET;

/** The charge of `input` prompt tokens (cache reads and writes among them) and `output`, rounded once. */
function charge(o: Offering, u: { input: number; output: number; cached?: number; write?: number }): bigint {
  const cached = u.cached ?? 0;
  const write = u.write ?? 0;
  const exact = BigInt(u.input - cached - write) * parseUsd(o.prices.input) + BigInt(cached) * parseUsd(o.prices.cached)
    + BigInt(write) * parseUsd(o.prices.write) + BigInt(u.output) * parseUsd(o.prices.output);
  return (exact + 500_000n) / 1_000_000n;
}

const weather = { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const chatTools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: weather }];
const messagesTools: Anthropic.Tool[] = [{ name: weather.name, description: weather.description, input_schema: weather.parameters as Anthropic.Tool.InputSchema }];

interface SimLast { path: string; headers: Record<string, string>; body: Record<string, unknown> }
const lastAt = (sim: Simulator) => fetch(`${sim.url}/__sim/last`).then((r) => r.json() as Promise<SimLast>);

describeStore('AWS Bedrock through the gateway (SigV4, Converse, ConverseStream)', () => {
  let t: TestGateway;
  let a: Account;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  /** The charge of the request since `before`, with the newest usage row. */
  async function spent(before: Awaited<ReturnType<typeof settled>>) {
    const after = await settled(a);
    return { nano: before.balanceNano - after.balanceNano, rows: after.rows - before.rows, last: after.last! };
  }

  it('chat: a signed Converse request to the model path; the answer billed from its usage', async () => {
    const before = await settled(a);
    const completion = await openai.chat.completions.create({ model: SONNET.id, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] });
    expect(completion.model).toBe(SONNET.id);
    expect(completion.choices[0]!.message.content).toMatch(/^This is a simulated reply to: Say hello/);
    const sent = await lastAt(t.sim);
    expect(sent.path).toBe(`/model/${encodeURIComponent(SONNET.upstream)}/converse`);
    expect(sent.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${SIMULATOR_AWS_CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=`));
    expect(sent.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Say hello' }] }], system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 4096 } });
    const usage = completion.usage!;
    const { nano, rows, last } = await spent(before);
    expect(rows).toBe(1);
    expect(last.details).toMatchObject({ input: usage.prompt_tokens, output: usage.completion_tokens });
    expect(nano).toBe(charge(SONNET, { input: usage.prompt_tokens, output: usage.completion_tokens }));
  });

  it('chat stream: ConverseStream frames become chunks; usage from the metadata event, billed as the JSON answer', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Stream it' }];
    const json = await openai.chat.completions.create({ model: NOVA.id, messages, max_tokens: 40 });
    const before = await settled(a);
    const stream = await openai.chat.completions.create({ model: NOVA.id, messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    const { text, usage } = await collectChatStream(stream);
    expect((await lastAt(t.sim)).path).toBe(`/model/${encodeURIComponent(NOVA.upstream)}/converse-stream`);
    expect(text).toBe(json.choices[0]!.message.content);
    expect(usage).toMatchObject({ prompt_tokens: json.usage!.prompt_tokens, completion_tokens: json.usage!.completion_tokens });
    const { nano } = await spent(before);
    expect(nano).toBe(charge(NOVA, { input: json.usage!.prompt_tokens, output: json.usage!.completion_tokens }));
  });

  it('chat tool call, JSON and streamed (ConverseStream tool use): the tool reaches Converse, the call comes back', async () => {
    const completion = await openai.chat.completions.create({ model: SONNET.id, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: chatTools, tool_choice: 'required' });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    const call = completion.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: expect.any(String) });
    expect((await lastAt(t.sim)).body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', description: 'Weather in a city', inputSchema: { json: weather.parameters } } }], toolChoice: { any: {} } });
    const before = await settled(a);
    const runner = openai.chat.completions.stream({ model: SONNET.id, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: chatTools, tool_choice: 'required', stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(streamed.function).toEqual(call.function);
    expect(streamed.id).toBe(call.id);
    const { nano } = await spent(before);
    expect(nano).toBe(charge(SONNET, { input: final.usage!.prompt_tokens, output: final.usage!.completion_tokens }));
    // The tool's result goes back as a Converse toolResult in the user turn.
    await openai.chat.completions.create({ model: SONNET.id, tools: chatTools, messages: [
      { role: 'user', content: 'Weather in Paris?' }, completion.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' },
    ] });
    const sent = (await lastAt(t.sim)).body.messages as Array<{ role: string; content: unknown[] }>;
    expect(sent[1]).toEqual({ role: 'assistant', content: [{ toolUse: { toolUseId: call.id, name: 'get_weather', input: JSON.parse(call.function.arguments) } }] });
    expect(sent[2]).toEqual({ role: 'user', content: [{ toolResult: { toolUseId: call.id, content: [{ text: 'Sunny, 21 C' }] } }] });
  });

  it('messages: JSON and stream give the same message; billed from Bedrock usage', async () => {
    const params = { model: SONNET.id, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hello there' }] };
    const before = await settled(a);
    const json = await anthropic.messages.create(params);
    expect(json.model).toBe(SONNET.id);
    expect(json.stop_reason).toBe('end_turn');
    const first = await spent(before);
    expect(first.nano).toBe(charge(SONNET, { input: json.usage.input_tokens, output: json.usage.output_tokens }));
    const texts: string[] = [];
    const mid = await settled(a);
    const final = await anthropic.messages.stream(params).on('text', (x) => texts.push(x)).finalMessage();
    expect(texts.join('')).toBe((json.content[0] as Anthropic.TextBlock).text);
    expect(final.usage).toMatchObject({ input_tokens: json.usage.input_tokens, output_tokens: json.usage.output_tokens });
    expect((await spent(mid)).nano).toBe(first.nano);
  });

  it('messages stream tool use: the tool_use block and its input_json deltas; cache writes then reads priced as such', async () => {
    const final = await anthropic.messages.stream({ model: SONNET.id, max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: messagesTools, tool_choice: { type: 'any' } }).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: expect.any(String) } });
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: 'You are a careful assistant. '.repeat(30), cache_control: { type: 'ephemeral' } }];
    const params = { model: SONNET.id, max_tokens: 32, system, messages: [{ role: 'user' as const, content: 'hi' }] };
    const b1 = await settled(a);
    const written = await anthropic.messages.create(params);
    expect((await lastAt(t.sim)).body.system).toEqual([{ text: system[0]!.text }, { cachePoint: { type: 'default' } }]);
    const c1 = await spent(b1);
    const write = written.usage.cache_creation_input_tokens!;
    expect(write).toBeGreaterThan(0);
    expect(c1.last.details).toMatchObject({ cache_write: write, cached: 0 });
    expect(c1.nano).toBe(charge(SONNET, { input: written.usage.input_tokens + write, write, output: written.usage.output_tokens }));
    const b2 = await settled(a);
    const read = await anthropic.messages.stream(params).finalMessage();
    expect(read.usage.cache_read_input_tokens).toBe(write);
    const c2 = await spent(b2);
    expect(c2.last.details).toMatchObject({ cached: write, cache_write: 0 });
    expect(c2.nano).toBe(charge(SONNET, { input: read.usage.input_tokens + write, cached: write, output: read.usage.output_tokens }));
  });

  it('responses: responses -> chat -> Converse, billed from Bedrock usage', async () => {
    const before = await settled(a);
    const response = await openai.responses.create({ model: SONNET.id, input: 'Say hello', store: false });
    expect(response.output_text).toMatch(/^This is a simulated reply to: Say hello/);
    expect((await lastAt(t.sim)).path).toBe(`/model/${encodeURIComponent(SONNET.upstream)}/converse`);
    const { nano } = await spent(before);
    expect(nano).toBe(charge(SONNET, { input: response.usage!.input_tokens, output: response.usage!.output_tokens }));
  });

  it('responses stream: ConverseStream through chat to response events, billed as the JSON answer', async () => {
    const json = await openai.responses.create({ model: NOVA.id, input: 'Stream a response', store: false });
    const before = await settled(a);
    const stream = await openai.responses.create({ model: NOVA.id, input: 'Stream a response', store: false, stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect((await lastAt(t.sim)).path).toBe(`/model/${encodeURIComponent(NOVA.upstream)}/converse-stream`);
    expect(text).toBe(json.output_text);
    expect(completed!.usage).toMatchObject({ input_tokens: json.usage!.input_tokens, output_tokens: json.usage!.output_tokens });
    const { nano } = await spent(before);
    expect(nano).toBe(charge(NOVA, { input: json.usage!.input_tokens, output: json.usage!.output_tokens }));
  });

  it('a frame failing its CRC mid-stream ends the client stream with a clean error', async () => {
    await t.fault({ malformed_after_chunks: 3, times: 1 }, SONNET.upstream);
    const res = await postChat(a, { model: SONNET.id, messages: [{ role: 'user', content: 'A longer story please' }], stream: true });
    expect(res.status).toBe(200);
    const out = await readSse(res);
    expect(out.text.length).toBeGreaterThan(0);
    expect(out.done).toBe(false);
    expect(out.errors).toEqual([expect.objectContaining({ code: 'upstream_error', message: expect.stringMatching(/corrupt.*checksum/) })]);
    await settled(a); // no hold left open
  });

  it('an exception frame mid-stream is a clean stream error in the messages format too', async () => {
    await t.fault({ error_after_chunks: 3, times: 1 }, SONNET.upstream);
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST', headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: SONNET.id, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'A longer story please' }] }),
    });
    const text = await res.text();
    expect(text).toContain('event: content_block_delta');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream provider failed mid-stream \(internalServerException\): Simulated internal error\.","code":"upstream_error"\}\}\n\n$/);
    expect(text).not.toContain('message_stop');
    await settled(a);
  });
});

describeStore('AWS Bedrock with configured credentials (BEDROCK_BASE_URL at the simulator)', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  const env = (secret: string, token?: string): Record<string, string> => ({
    AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: SIMULATOR_AWS_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: secret, BEDROCK_BASE_URL: sim.url, ...(token ? { AWS_SESSION_TOKEN: token } : {}),
  });

  it('the right secret and a session token: signed, x-amz-security-token sent, answered and billed', async () => {
    const t = await startTestGateway({ env: env(SIMULATOR_AWS_CREDENTIALS.secretAccessKey, 'FAKE-SESSION-TOKEN-FOR-TESTS') });
    try {
      const a: Account = { ...(await t.account('1')), t };
      const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: SONNET.id, messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.choices[0]!.message.content).toMatch(/simulated reply/);
      const sent = await lastAt(sim);
      expect(sent.headers['x-amz-security-token']).toBe('FAKE-SESSION-TOKEN-FOR-TESTS');
      expect(sent.headers.authorization).toContain('x-amz-security-token');
      const after = await settled(a);
      expect(after.rows).toBe(1);
    } finally { await t.dispose(); }
  });

  // A key answered 403 is taken out of the pool until a reload (issue 29 item 2): one gateway per format.
  const wrongSecretCases = [
    { format: 'chat', send: (t: TestGateway, key: string) => postChat({ id: '', key, t }, { model: SONNET.id, messages: [{ role: 'user', content: 'hi' }] }), body: { error: { code: 'upstream_error', type: 'server_error' } } },
    {
      format: 'messages (stream asked)',
      send: (t: TestGateway, key: string) => fetch(`${t.url}/v1/messages`, {
        method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: SONNET.id, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }),
      body: { type: 'error', error: { type: 'api_error', code: 'upstream_error' } },
    },
  ];
  for (const c of wrongSecretCases) {
    it(`a wrong secret (${c.format}): Bedrock's 403 is a 502 to the client, in its format, and nothing is charged`, async () => {
      const t = await startTestGateway({ env: env('wrong-secret-not-the-simulators') });
      try {
        const a: Account = { ...(await t.account('1')), t };
        const before = await settled(a);
        const res = await c.send(t, a.key);
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject(c.body);
        const sent = await lastAt(sim);
        expect(sent.path).toBe(`/model/${encodeURIComponent(SONNET.upstream)}/${c.format === 'chat' ? 'converse' : 'converse-stream'}`);
        const after = await settled(a);
        expect(after.balanceNano).toBe(before.balanceNano);
        expect(after.rows).toBe(before.rows);
      } finally { await t.dispose(); }
    });
  }
});
