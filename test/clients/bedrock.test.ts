/**
 * The official @aws-sdk/client-bedrock-runtime against the simulator (issue 32 item 2): its Converse
 * and ConverseStream, signed by the SDK's own SigV4 signer and checked by the simulator, parse what the
 * simulator answers (the JSON, and the AWS event-stream frames with their CRCs). A wrong secret is
 * Bedrock's 403, which the SDK reads as the vendor's signature error. This proves the simulator speaks
 * the format the gateway is tested against.
 */
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { SIMULATOR_AWS_CREDENTIALS } from '../../src/upstream/sigv4-auth.js';

const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
let sim: Simulator;

function client(secretAccessKey = SIMULATOR_AWS_CREDENTIALS.secretAccessKey, sessionToken?: string): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    // HTTP/1.1: the simulator (like the gateway's undici pools) speaks it; the SDK's default handler is HTTP/2.
    region: 'us-east-1', endpoint: sim.url, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
    credentials: { accessKeyId: SIMULATOR_AWS_CREDENTIALS.accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
  });
}

const weather = { toolSpec: { name: 'get_weather', description: 'Weather in a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } };

beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());

describe('@aws-sdk/client-bedrock-runtime against the simulator', () => {
  it('Converse: a signed request, a text answer and its usage', async () => {
    const out = await client().send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Say hello' }] }], inferenceConfig: { maxTokens: 64 } }));
    expect(out.stopReason).toBe('end_turn');
    const text = out.output?.message?.content?.[0]?.text;
    expect(text).toMatch(/^This is a simulated reply to: Say hello/);
    expect(out.usage!.inputTokens).toBeGreaterThan(0);
    expect(out.usage!.outputTokens).toBeGreaterThan(0);
    expect(out.usage!.totalTokens).toBe(out.usage!.inputTokens! + out.usage!.outputTokens!);
  });

  it('Converse with a session token (temporary credentials) and a tool call', async () => {
    const out = await client(undefined, 'FwoGZXIvYXdzEXAMPLEFAKESESSIONTOKEN').send(new ConverseCommand({
      modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Weather in Paris?' }] }], toolConfig: { tools: [weather], toolChoice: { any: {} } },
    }));
    expect(out.stopReason).toBe('tool_use');
    const use = out.output?.message?.content?.[0]?.toolUse;
    expect(use?.name).toBe('get_weather');
    expect(use?.input).toEqual({ city: expect.any(String) });
  });

  it('ConverseStream: the SDK reads every event-stream frame, text and usage as Converse gives them', async () => {
    const params = { modelId: MODEL, messages: [{ role: 'user' as const, content: [{ text: 'Say hello' }] }], inferenceConfig: { maxTokens: 64 } };
    const json = await client().send(new ConverseCommand(params));
    const out = await client().send(new ConverseStreamCommand(params));
    const events: ConverseStreamOutput[] = [];
    for await (const event of out.stream!) events.push(event);
    expect(events[0]!.messageStart).toEqual({ role: 'assistant' });
    const text = events.map((e) => e.contentBlockDelta?.delta?.text ?? '').join('');
    expect(text).toBe(json.output?.message?.content?.[0]?.text);
    expect(events.at(-2)!.messageStop).toEqual({ stopReason: 'end_turn' });
    expect(events.at(-1)!.metadata?.usage).toEqual(json.usage);
  });

  it('ConverseStream tool use: the start names the tool, the deltas carry its input', async () => {
    const out = await client().send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Weather?' }] }], toolConfig: { tools: [weather] } }));
    const events: ConverseStreamOutput[] = [];
    for await (const event of out.stream!) events.push(event);
    const start = events.find((e) => e.contentBlockStart)!.contentBlockStart!;
    expect(start.start?.toolUse?.name).toBe('get_weather');
    const input = events.map((e) => e.contentBlockDelta?.delta?.toolUse?.input ?? '').join('');
    expect(JSON.parse(input)).toEqual({ city: expect.any(String) });
    expect(events.find((e) => e.messageStop)!.messageStop!.stopReason).toBe('tool_use');
  });

  it('a wrong secret: the simulator answers 403 InvalidSignatureException, as Bedrock does', async () => {
    const error = await client('not-the-simulator-secret').send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
  });

  it('a cache point: the first request writes the cache, the next reads it', async () => {
    const params = { modelId: MODEL, system: [{ text: 'You are a careful assistant. '.repeat(20) }, { cachePoint: { type: 'default' as const } }], messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }] };
    const first = await client().send(new ConverseCommand(params));
    const second = await client().send(new ConverseCommand(params));
    expect(first.usage!.cacheWriteInputTokens).toBeGreaterThan(0);
    expect(second.usage!.cacheReadInputTokens).toBe(first.usage!.cacheWriteInputTokens);
    expect(second.usage!.totalTokens).toBe(first.usage!.totalTokens);
  });
});
