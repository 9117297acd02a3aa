/**
 * Contract for the Gemini generateContent format (issue 32 item 3): the wire types of
 * docs/vendors/gemini/generate-content.schema.json (transcribed from Google's official client, see
 * docs/vendors/gemini.md) judge both sides. The gateway's outgoing bodies: every golden
 * `upstream-request.json` of a translator to gemini-generate-content (test/translate/*--gemini-generate-content)
 * is a GenerateContentRequest, whose request objects refuse any member they do not list. What the
 * gateway reads: the golden upstream answers and stream chunks, and the simulator's own answers, are
 * GenerateContentResponses (its errors Google RPC statuses). A negative control shows the schema refuses.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { SseParser } from '../../src/translate/sse.js';

const schema = JSON.parse(readFileSync(join(projectRoot(), 'docs/vendors/gemini/generate-content.schema.json'), 'utf8')) as Record<string, unknown>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schema);
const validator = (name: string) => ajv.getSchema(`vendors/gemini/generate-content.schema.json#/$defs/${name}`)!;
const request = validator('GenerateContentRequest');
const response = validator('GenerateContentResponse');
const status = validator('Status');

const translations = join(projectRoot(), 'test/translate');
const cases = readdirSync(translations).filter((pair) => pair.endsWith('--gemini-generate-content'))
  .flatMap((pair) => readdirSync(join(translations, pair), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(translations, pair, d.name)));
const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

describe('the gateway\'s Gemini bodies against the wire types', () => {
  it('has golden cases to judge', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  for (const dir of cases) {
    const name = dir.slice(translations.length + 1);
    it(`${name}: the outgoing body is a GenerateContentRequest, the upstream answer a GenerateContentResponse`, () => {
      expect(request(json(join(dir, 'upstream-request.json'))), JSON.stringify(request.errors)).toBe(true);
      const answers = existsSync(join(dir, 'upstream-response.json'))
        ? [json(join(dir, 'upstream-response.json'))]
        : new SseParser().push(readFileSync(join(dir, 'upstream-stream.sse'), 'utf8')).map((e) => JSON.parse(e.data) as unknown);
      for (const answer of answers) expect(response(answer), JSON.stringify(response.errors)).toBe(true);
    });
  }

  it('refuses a body that carries the model or a stream flag, or a part it does not know', () => {
    const contents = [{ role: 'user', parts: [{ text: 'Hi' }] }];
    expect(request({ contents })).toBe(true);
    expect(request({ model: 'gemini-2.5-flash', contents })).toBe(false);
    expect(request({ contents, stream: true })).toBe(false);
    expect(request({ contents: [{ role: 'user', parts: [{ image_url: 'x' }] }] })).toBe(false);
    expect(request({ contents, generationConfig: { max_tokens: 10 } })).toBe(false);
  });
});

describe('the simulator\'s Gemini answers against the wire types', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const body = {
    contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
    tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] }],
  };

  it('answers JSON, function calls and stream chunks as GenerateContentResponses, on both path forms', async () => {
    for (const sent of [body, { contents: body.contents }]) {
      const answer = await (await post('/v1beta/models/gemini-2.5-pro:generateContent', sent)).json();
      expect(response(answer), JSON.stringify(response.errors)).toBe(true);
    }
    const res = await fetch(`${sim.url}/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer fake-token' }, body: JSON.stringify({ contents: body.contents }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks = new SseParser().push(await res.text());
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(response(JSON.parse(chunk.data)), JSON.stringify(response.errors)).toBe(true);
  });

  it('answers errors as Google RPC statuses', async () => {
    const refused = await post('/v1beta/models/gemini-2.5-flash:generateContent', { ...body, stream: true });
    expect(refused.status).toBe(400);
    expect(status(await refused.json())).toBe(true);
    // Once the simulator issues tokens (a service account registered), the Vertex form wants one.
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    expect((await post('/__sim/google/accounts', { client_email: 'wire-test@example.iam.gserviceaccount.com', public_key: publicKey })).status).toBe(200);
    const anonymous = await post('/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:generateContent', body);
    expect(anonymous.status).toBe(401);
    expect(status(await anonymous.json())).toBe(true);
  });
});
