/**
 * Contract for the Gemini generateContent format against Google's own published models (issue 32,
 * "Contracts"): the discovery documents for generativelanguage v1beta (AI Studio) and aiplatform v1
 * (Vertex AI), kept as verbatim excerpts under docs/vendors/google/ (docs/vendors/gemini.md says
 * where they were read). Each golden outgoing body of a translator to gemini-generate-content is the
 * request of both documents' generateContent (closed: a member Google does not define fails, and so
 * does one the URL carries, such as `model`); each golden upstream answer and stream chunk, and the
 * simulator's answers, are the response of both. Our own transcription
 * (docs/vendors/gemini/generate-content.schema.json) may allow no request member that either
 * document lacks or types otherwise.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { SseParser } from '../../src/translate/sse.js';
import { requestDifferences } from '../helpers/discovery-compare.js';
import { convertSchema, pathBoundMembers, readExcerpt, toJsonSchema, type DiscoveryExcerpt, type JsonSchema } from '../helpers/discovery-schema.js';

interface Contract { name: string; excerpt: DiscoveryExcerpt; method: string; stream: string; request: ValidateFunction; response: ValidateFunction; pathBound: string[] }

function contract(name: string, file: string, method: string, stream: string): Contract {
  const excerpt = readExcerpt(file);
  const m = excerpt.methods[method]!;
  const pathBound = pathBoundMembers(excerpt, method);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(toJsonSchema(excerpt, { id: 'request', closed: true, omit: { [m.request!.$ref]: pathBound } }));
  ajv.addSchema(toJsonSchema(excerpt, { id: 'response', closed: false }));
  const get = (ref: string) => ajv.getSchema(ref)!;
  return { name, excerpt, method, stream, request: get(`request#/$defs/${m.request!.$ref}`), response: get(`response#/$defs/${m.response!.$ref}`), pathBound };
}

const contracts = [
  contract('generativelanguage v1beta', 'docs/vendors/google/generativelanguage-v1beta.schemas.json', 'generativelanguage.models.generateContent', 'generativelanguage.models.streamGenerateContent'),
  contract('aiplatform v1', 'docs/vendors/google/aiplatform-v1.schemas.json', 'aiplatform.projects.locations.publishers.models.generateContent', 'aiplatform.projects.locations.publishers.models.streamGenerateContent'),
];

const translations = join(projectRoot(), 'test/translate');
const cases = readdirSync(translations).filter((pair) => pair.endsWith('--gemini-generate-content'))
  .flatMap((pair) => readdirSync(join(translations, pair), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(translations, pair, d.name)));
const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const errors = (v: ValidateFunction) => JSON.stringify(v.errors);
const refs = (node: unknown): string[] => (typeof node !== 'object' || node === null) ? []
  : Object.entries(node).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refs(v)));

describe('the discovery excerpts', () => {
  for (const c of contracts) {
    it(`${c.name}: names its source, is closed under $ref, stubs only what it lists`, () => {
      const { source, schemas, stubbed, methods } = c.excerpt;
      expect(source.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(source.revision).toMatch(/^20\d{6}$/);
      expect(source.total_chars).toBeGreaterThan(100_000);
      for (const ref of refs({ schemas, methods })) expect(schemas, ref).toHaveProperty([ref]);
      for (const [name, schema] of Object.entries(schemas)) {
        if (stubbed.includes(name)) expect(schema, name).toEqual({});
        else expect(schema.id, name).toBe(name);
      }
      const [plain, streamed] = [methods[c.method]!, methods[c.stream]!];
      expect(streamed.request).toEqual(plain.request);
      expect(streamed.response).toEqual(plain.response);
      expect(plain.path).toMatch(/^v1(beta)?\/\{\+model\}:generateContent$/);
    });
  }

  it('binds the model to the URL, not the body (generativelanguage lists it in the request message)', () => {
    expect(contracts.map((c) => c.pathBound)).toEqual([['model'], []]);
  });

  it('accepts an int64 as a decimal string or an integer, as proto3 JSON does', () => {
    const ajv = new Ajv2020({ strict: false });
    const int64 = ajv.compile(convertSchema({ type: 'string', format: 'int64' }, true));
    expect([int64('12'), int64(12), int64('-3'), int64('1.5'), int64(1.5), int64('x')]).toEqual([true, true, true, false, false, false]);
  });
});

describe('the gateway\'s Gemini bodies against the discovery documents', () => {
  it('has golden cases to judge', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  for (const dir of cases) {
    const name = dir.slice(translations.length + 1);
    it(`${name}: the outgoing body and the upstream answer fit both documents`, () => {
      const body = json(join(dir, 'upstream-request.json'));
      const answers = existsSync(join(dir, 'upstream-response.json'))
        ? [json(join(dir, 'upstream-response.json'))]
        : new SseParser().push(readFileSync(join(dir, 'upstream-stream.sse'), 'utf8')).map((e) => JSON.parse(e.data) as unknown);
      for (const c of contracts) {
        expect(c.request(body), `${c.name}: ${errors(c.request)}`).toBe(true);
        for (const answer of answers) expect(c.response(answer), `${c.name}: ${errors(c.response)}`).toBe(true);
      }
    });
  }

  it('refuses (negative controls) the model or a stream flag in the body, an unknown part or config member', () => {
    const contents = [{ role: 'user', parts: [{ text: 'Hi' }] }];
    for (const c of contracts) {
      expect(c.request({ contents }), c.name).toBe(true);
      expect(c.request({ model: 'models/gemini-2.5-flash', contents }), c.name).toBe(false);
      expect(c.request({ contents, stream: true }), c.name).toBe(false);
      expect(c.request({ contents: [{ role: 'user', parts: [{ image_url: 'x' }] }] }), c.name).toBe(false);
      expect(c.request({ contents, generationConfig: { max_tokens: 10 } }), c.name).toBe(false);
      expect(c.request({ contents, generationConfig: { maxOutputTokens: '10' } }), c.name).toBe(false);
      expect(c.response({ candidates: [{ content: { parts: [{ text: 1 }] } }] }), c.name).toBe(false);
    }
  });
});

describe('our transcribed wire types against the discovery documents', () => {
  const ours = json(join(projectRoot(), 'docs/vendors/gemini/generate-content.schema.json')) as JsonSchema;
  for (const c of contracts) {
    it(`${c.name}: every request member ours allows is the vendor's, with a compatible type`, () => {
      const root = c.excerpt.methods[c.method]!.request!.$ref;
      expect(requestDifferences(ours, 'GenerateContentRequest', c.excerpt, root, c.pathBound)).toEqual([]);
    });
  }

  it('the walk finds a member, a type and an enum value the vendor lacks (negative control)', () => {
    const wrong: JsonSchema = { $defs: { GenerateContentRequest: { type: 'object', additionalProperties: false, properties: {
      model: { type: 'string' }, stream: { type: 'boolean' }, cachedContent: { type: 'integer' },
      toolConfig: { type: 'object', additionalProperties: false, properties: { functionCallingConfig: { type: 'object', additionalProperties: false, properties: { mode: { enum: ['AUTO', 'SOMETIMES'] } } } } },
    } } } };
    const [gl] = contracts;
    expect(requestDifferences(wrong, 'GenerateContentRequest', gl!.excerpt, 'GenerateContentRequest', gl!.pathBound)).toEqual([
      '.model: not a body member of GenerateContentRequest',
      '.stream: not a body member of GenerateContentRequest',
      '.cachedContent: ours allows integer, GenerateContentRequest wants string',
      '.toolConfig.functionCallingConfig.mode: ours allows "SOMETIMES", not values of FunctionCallingConfig',
    ]);
  });
});

describe('the simulator\'s Gemini answers against the discovery documents', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });

  const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer fake-token' }, body: JSON.stringify(body),
  });
  const contents = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
  const tools = [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] }];
  const thinking = { generationConfig: { thinkingConfig: { thinkingBudget: 512, includeThoughts: true } } };

  it('answers JSON (text, thoughts, a function call) and stream chunks that fit both documents', async () => {
    const answers: unknown[] = [];
    for (const body of [{ contents }, { contents, tools }, { contents, ...thinking }]) {
      answers.push(await (await post('/v1beta/models/gemini-2.5-pro:generateContent', body)).json());
    }
    const res = await post('/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents, ...thinking });
    const chunks = new SseParser().push(await res.text()).map((e) => JSON.parse(e.data) as unknown);
    expect(chunks.length).toBeGreaterThan(1);
    for (const answer of [...answers, ...chunks]) {
      for (const c of contracts) expect(c.response(answer), `${c.name}: ${errors(c.response)}`).toBe(true);
    }
  });
});
