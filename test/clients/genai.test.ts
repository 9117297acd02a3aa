/**
 * Google's official `@google/genai` client against the simulator's Gemini routes (issue 32 item 3):
 * the SDK, unchanged, reads the simulator's answers and streams on both path forms, which proves
 * the simulator speaks the vendor's wire format: Google AI Studio (the key in x-goog-api-key, /v1beta)
 * and Vertex AI (`vertexai: true`, an OAuth bearer token, /projects/{p}/locations/{l}/publishers/google).
 * The Vertex token is one the simulator issued (a registered service account's signed JWT exchanged
 * at its token endpoint, as the gateway does) and checks, handed to the SDK by a stand-in auth client
 * (loopback only: nothing reaches Google).
 */
import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { CLOUD_PLATFORM_SCOPE } from '../../src/sim/google-oauth.js';
import { AccessTokens } from '../../src/upstream/google-service-account.js';
import { createServiceAccount, type TestServiceAccount } from '../helpers/service-account.js';

interface Upstream { path: string; headers: Record<string, string>; body: Record<string, any> }

/** An auth client for GoogleAuth's `authClient` option that hands out one fixed access token, or none. */
function fixedToken(token: string | null): never {
  return { getRequestHeaders: async () => new Headers(token ? { authorization: `Bearer ${token}` } : {}) } as never;
}

const weather = { name: 'get_weather', description: 'Current weather of a city.', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('@google/genai against the simulated Gemini endpoints', () => {
  let sim: Simulator;
  let studio: GoogleGenAI;
  let vertex: GoogleGenAI;
  let account: TestServiceAccount;
  let token: string;
  const last = (): Promise<Upstream> => fetch(`${sim.url}/__sim/last`).then((r) => r.json() as Promise<Upstream>);

  beforeAll(async () => {
    sim = await startSimulator();
    studio = new GoogleGenAI({ apiKey: 'fake-studio-key', httpOptions: { baseUrl: sim.url } });
    // Once an account is registered, the simulator's Vertex routes take only the tokens it issued.
    // A registered account's signed JWT exchanged at the simulator's token endpoint, as the gateway does it.
    account = await createServiceAccount(sim.url);
    token = await new AccessTokens(CLOUD_PLATFORM_SCOPE).token(account.path);
    vertex = new GoogleGenAI({ vertexai: true, project: 'sim-project', location: 'us-central1', httpOptions: { baseUrl: sim.url }, googleAuthOptions: { authClient: fixedToken(token) } });
  });
  afterAll(async () => { await account?.dispose(); await sim?.close(); });

  it('AI Studio: generateContent answers text with usageMetadata, thoughts counted apart from candidates', async () => {
    const response = await studio.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hello Gemini', config: { systemInstruction: 'Be brief.', maxOutputTokens: 200 } });
    expect(response.text).toContain('Hello Gemini');
    expect(response.candidates![0]!.finishReason).toBe('STOP');
    const usage = response.usageMetadata!;
    expect(usage.thoughtsTokenCount).toBe(48);
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount! + 48);
    expect(response.responseId).toMatch(/^sim/);
    const upstream = await last();
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(upstream.headers['x-goog-api-key']).toBe('fake-studio-key');
    expect(upstream.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { maxOutputTokens: 200 } });
  });

  it('AI Studio: generateContentStream streams the same text, the last chunk with the finish reason and whole usage', async () => {
    const request = { model: 'gemini-2.5-flash', contents: 'Stream a reply about the sea', config: { maxOutputTokens: 120 } };
    const json = await studio.models.generateContent(request);
    let text = '';
    let final: { finishReason?: string; usage?: unknown } = {};
    for await (const chunk of await studio.models.generateContentStream(request)) {
      text += chunk.text ?? '';
      final = { finishReason: chunk.candidates?.[0]?.finishReason ?? final.finishReason, usage: chunk.usageMetadata };
    }
    expect(text).toBe(json.text);
    expect(final.finishReason).toBe('STOP');
    expect(final.usage).toEqual(json.usageMetadata);
    expect((await last()).path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  });

  it('AI Studio: function calling with a JSON Schema declaration, and the functionResponse round trip', async () => {
    const config = { tools: [{ functionDeclarations: [weather] }] };
    const response = await studio.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Weather in Paris?', config });
    expect(response.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'sim' } }]);
    const followUp = await studio.models.generateContent({
      model: 'gemini-2.5-flash', config,
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny' } } }] },
      ],
    });
    expect(followUp.functionCalls).toBeUndefined();
    expect(followUp.text).toMatch(/\S/);
  });

  it('AI Studio: structured output (responseJsonSchema) answers JSON that fits the schema', async () => {
    const response = await studio.models.generateContent({
      model: 'gemini-2.5-flash', contents: 'A city and its temperature.',
      config: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] } },
    });
    expect(JSON.parse(response.text!)).toEqual({ city: 'sim', celsius: 1 });
  });

  it('AI Studio: an empty key is the vendor\'s 400, an unknown request field its "Unknown name" 400', async () => {
    const empty = new GoogleGenAI({ apiKey: ' ', httpOptions: { baseUrl: sim.url } });
    await expect(empty.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('API key not valid') });
    const res = await fetch(`${sim.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('Unknown name "model"') } });
  });

  it('Vertex AI: generateContent and its stream on the project path form, with the bearer token the simulator issued', async () => {
    const response = await vertex.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello Vertex' });
    expect(response.text).toContain('Hello Vertex');
    const upstream = await last();
    expect(upstream.path).toMatch(/^\/v1(beta1)?\/projects\/sim-project\/locations\/us-central1\/publishers\/google\/models\/gemini-2.5-flash:generateContent$/);
    expect(upstream.headers.authorization).toBe(`Bearer ${token}`);
    let text = '';
    for await (const chunk of await vertex.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Hello Vertex' })) text += chunk.text ?? '';
    expect(text).toBe(response.text);
    expect((await last()).path).toMatch(/\/publishers\/google\/models\/gemini-2.5-flash:streamGenerateContent$/);
  });

  it('Vertex AI: a request without a bearer token, or with one the simulator did not issue, is a 401', async () => {
    for (const other of [null, 'ya29.not-issued']) {
      const client = new GoogleGenAI({ vertexai: true, project: 'sim-project', location: 'us-central1', httpOptions: { baseUrl: sim.url }, googleAuthOptions: { authClient: fixedToken(other) } });
      const failure = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApiError);
      expect((failure as ApiError).status).toBe(401);
    }
  });
});
