/**
 * The simulator's Gemini routes (src/sim/gemini.ts, gemini-route.ts) beyond what @google/genai reads
 * (test/clients/genai.test.ts): exact usage (prompt, thoughts by model and budget, cached), thought
 * summaries, MAX_TOKENS, a stream without alt=sse, credentials per path form, and faults scoped by
 * the model of the path.
 */
import { generateKeyPairSync } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countGeminiPromptTokens } from '../../src/sim/gemini.js';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { naturalReply } from '../../src/sim/text.js';
import { countTextTokens } from '../../src/tokenize.js';
import { simCall } from './helpers.js';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const studio = (model: string, method = 'generateContent') => `/v1beta/models/${model}:${method}`;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => simCall(sim.url, path, 'POST', body, headers);
const addFault = (fault: SimFault, model?: string) => simCall(sim.url, '/__sim/faults', 'POST', { model, fault });
const hello = { contents: [{ role: 'user', parts: [{ text: 'Hi there' }] }] };

describe('generateContent', () => {
  it('answers the natural reply with exact usage; a flash model does not think', async () => {
    const res = await post(studio('gemini-2.5-flash'), hello);
    expect(res.status).toBe(200);
    const text = naturalReply('Hi there');
    expect(res.json.candidates).toEqual([{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }]);
    const prompt = countGeminiPromptTokens(hello as never);
    expect(prompt).toBe(3 + countTextTokens('Hi there'));
    expect(res.json.usageMetadata).toEqual({ promptTokenCount: prompt, candidatesTokenCount: countTextTokens(text), totalTokenCount: prompt + countTextTokens(text) });
    expect(res.json).toMatchObject({ modelVersion: 'gemini-2.5-flash', responseId: expect.stringMatching(/^sim/) });
  });

  it('thinks on pro models and within a budget, shows a summary only with includeThoughts, never with a budget of 0', async () => {
    const pro = await post(studio('gemini-2.5-pro'), { ...hello, generationConfig: { thinkingConfig: { includeThoughts: true } } });
    expect(pro.json.usageMetadata.thoughtsTokenCount).toBe(48);
    expect(pro.json.candidates[0].content.parts[0]).toEqual({ text: 'Thinking about the request (simulated).', thought: true });
    const budget = await post(studio('gemini-2.5-flash'), { ...hello, generationConfig: { thinkingConfig: { thinkingBudget: 20 } } });
    expect(budget.json.usageMetadata.thoughtsTokenCount).toBe(20);
    expect(budget.json.candidates[0].content.parts).toHaveLength(1);
    const off = await post(studio('gemini-2.5-pro'), { ...hello, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } });
    expect(off.json.usageMetadata.thoughtsTokenCount).toBeUndefined();
  });

  it('reports half the prompt cached for a long system instruction or cachedContent', async () => {
    const system = { parts: [{ text: 'Answer carefully and kindly. '.repeat(300) }] };
    const res = await post(studio('gemini-2.5-flash'), { ...hello, systemInstruction: system });
    expect(res.json.usageMetadata.cachedContentTokenCount).toBe(Math.floor(res.json.usageMetadata.promptTokenCount / 2));
    const named = await post(studio('gemini-2.5-flash'), { ...hello, cachedContent: 'cachedContents/abc' });
    expect(named.json.usageMetadata.cachedContentTokenCount).toBeGreaterThan(0);
  });

  it('stops at maxOutputTokens with MAX_TOKENS', async () => {
    const res = await post(studio('gemini-2.5-flash'), { ...hello, generationConfig: { maxOutputTokens: 3 } });
    expect(res.json.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(res.json.usageMetadata.candidatesTokenCount).toBeLessThanOrEqual(3);
  });

  it('calls the allowed function, and answers text when calling is off or the last turn answers a call', async () => {
    const tools = [{ functionDeclarations: [{ name: 'a', parametersJsonSchema: { type: 'object' } }, { name: 'b', parametersJsonSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }] }];
    const forced = await post(studio('gemini-2.5-flash'), { ...hello, tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } } });
    expect(forced.json.candidates[0].content.parts).toEqual([{ functionCall: { name: 'b', args: { n: 1 } } }]);
    const none = await post(studio('gemini-2.5-flash'), { ...hello, tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } });
    expect(none.json.candidates[0].content.parts[0].text).toMatch(/simulated reply/);
  });

  it('refuses unknown members, bad roles and both schema forms, as the vendor does', async () => {
    expect((await post(studio('gemini-2.5-flash'), { ...hello, stream: true })).json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect((await post(studio('gemini-2.5-flash'), { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })).status).toBe(400);
    expect((await post(studio('gemini-2.5-flash'), { ...hello, generationConfig: { responseSchema: {}, responseJsonSchema: {} } })).status).toBe(400);
  });
});

describe('streamGenerateContent', () => {
  it('streams chunks of a few words with alt=sse, the last one whole; without alt=sse one JSON array', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'Tell me about the sea please' }] }] };
    const json = await post(studio('gemini-2.5-flash'), body);
    const res = await request(`${sim.url}${studio('gemini-2.5-flash', 'streamGenerateContent')}?alt=sse`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const chunks = (await res.body.text()).split('\r\n\r\n').filter((f) => f !== '').map((f) => JSON.parse(f.replace(/^data: /, '')));
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe(json.json.candidates[0].content.parts[0].text);
    expect(chunks.at(-1)!.usageMetadata).toEqual(json.json.usageMetadata);
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    expect((await simCall(sim.url, '/__sim/last')).json).toMatchObject({ path: studio('gemini-2.5-flash', 'streamGenerateContent'), query: 'alt=sse' });
    const array = await post(studio('gemini-2.5-flash', 'streamGenerateContent'), body);
    expect(Array.isArray(JSON.parse(array.text))).toBe(true);
  });
});

describe('credentials and faults', () => {
  it('AI Studio refuses an empty key; Vertex wants an issued bearer token once a service account is registered', async () => {
    expect((await post(studio('gemini-2.5-flash'), hello, { 'x-goog-api-key': '' })).status).toBe(400);
    const vertex = '/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent';
    // Before: the simulator issues no tokens, and takes any (a keyless gateway sends none).
    expect((await post(vertex, hello, { authorization: 'Bearer fake-token' })).status).toBe(200);
    expect((await post(vertex, hello)).status).toBe(200);
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    expect((await post('/__sim/google/accounts', { client_email: 'sim-test@example.iam.gserviceaccount.com', public_key: publicKey })).status).toBe(200);
    expect((await post(vertex, hello)).json.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect((await post(vertex, hello, { authorization: 'Bearer fake-token' })).json.error).toMatchObject({ code: 401 });
  });

  it('scopes faults by the model of the path, in Google\'s error shape', async () => {
    await addFault({ status: 429 }, 'gemini-2.5-pro');
    expect((await post(studio('gemini-2.5-flash'), hello)).status).toBe(200);
    const limited = await post(studio('gemini-2.5-pro'), hello);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expect(limited.json.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    await simCall(sim.url, '/__sim/faults', 'DELETE');
    await addFault({ status: 400, error_code: 'context_length_exceeded' }, 'gemini-2.5-pro');
    expect((await post(studio('gemini-2.5-pro'), hello)).json.error.message).toMatch(/input token count .* exceeds the maximum/);
    await simCall(sim.url, '/__sim/faults', 'DELETE');
    await addFault({ omit_usage: true }, 'gemini-2.5-pro');
    expect((await post(studio('gemini-2.5-pro'), hello)).json.usageMetadata).toBeUndefined();
  });

  it('ends a stream with an error chunk on error_after_chunks', async () => {
    await addFault({ error_after_chunks: 1 }, 'gemini-2.5-flash');
    const res = await request(`${sim.url}${studio('gemini-2.5-flash', 'streamGenerateContent')}?alt=sse`, { method: 'POST', body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a long enough question to stream' }] }] }), headers: { 'content-type': 'application/json' } });
    const frames = (await res.body.text()).split('\r\n\r\n').filter((f) => f !== '');
    expect(frames).toHaveLength(2);
    expect(JSON.parse(frames[1]!.replace(/^data: /, ''))).toMatchObject({ error: { code: 500, status: 'INTERNAL' } });
  });
});
