/**
 * Contract: the request shapes of docs/vendors/native-ops.md against the vendors' published specs. Four
 * Prism mocks (`prism mock SPEC -d false -v debug`, one per spec, started once) play Cohere, Azure
 * Content Safety, Azure Translator and Azure Language; every request the simulator tests send
 * (test/sim/native-fixtures.ts) goes to the vendor's mock and to the simulator, and must pass Prism's
 * validation with no violation and be answered 2xx by both. This proves the documented paths, query
 * parameters, auth headers and bodies are the vendors' own, and that the simulator accepts exactly them.
 *
 * Prism only validates a body whose schema its Ajv compiles (it skips the others silently): the first
 * test compiles every exercised operation's request body as Prism does. Negative controls show the
 * validation is live (a request missing a required field gets 422). The last test pins Prism's blind
 * spots that the simulator covers: these schemas allow unknown fields (a misspelt parameter passes
 * Prism), Translator's spec declares no security scheme, limits that live only in descriptions.
 *
 * The Azure `*.prism-oas3.json` copies carry the service base path in their paths (`/contentsafety/...`,
 * `/language/...`), so every mock serves the vendor's own URL paths at its root, like the simulator.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { storeKind } from '../helpers/db.js';
import { compilePrismRequestBodies, logMark, loggedRequestsSince, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';
import { ANALYZE, AZURE_HEADERS, CS, REQUESTS, pollRequest, send, withBody, withPath, type NativeRequest, type Vendor } from '../sim/native-fixtures.js';

const SPECS = resolve(projectRoot(), '../shared/specs');
/** The spec Prism plays for each vendor. */
const VENDOR_SPECS: Record<Vendor, string> = {
  cohere: resolve(SPECS, 'cohere/cohere-openapi.prism.yaml'),
  'content-safety': resolve(SPECS, 'azure/content-safety/contentsafety.prism-oas3.json'),
  translator: resolve(SPECS, 'azure/translator-text/TextTranslation-3.0.openapi.prism-oas3.json'),
  language: resolve(SPECS, 'azure/language/analyzetext-2026-05-01.prism-oas3.json'),
};
/** The operations documented in docs/vendors/native-ops.md, as Prism names them (method and spec path). */
const OPERATIONS: Record<Vendor, string[]> = {
  cohere: ['POST /v2/embed', 'POST /v2/rerank'],
  'content-safety': ['POST /contentsafety/text:analyze'],
  translator: ['POST /translate'],
  language: ['POST /language/:analyze-text', 'POST /language/analyze-text/jobs', 'GET /language/analyze-text/jobs/{jobId}'],
};

// Store-independent and slow to start (Cohere's document is 1 MB): once, on the pglite project.
describe.runIf(storeKind === 'pglite')('Prism native vendor contract: the documented requests validate against the vendors\' specs', () => {
  const prisms = {} as Record<Vendor, PrismProcess>;
  let sim: Simulator;

  beforeAll(async () => {
    const vendors = Object.keys(VENDOR_SPECS) as Vendor[];
    const started = await Promise.all(vendors.map((v) => startPrismMock(VENDOR_SPECS[v])));
    vendors.forEach((v, i) => { prisms[v] = started[i]!; });
    sim = await startSimulator();
  }, 180_000);

  afterAll(async () => {
    await sim?.close();
    await Promise.all(Object.values(prisms).map((p) => stopChild(p?.child)));
  }, 60_000);

  /** Sends `r` to its vendor's mock and returns what the mock logged for it (one request). */
  async function viaPrism(r: NativeRequest): Promise<{ status: number; logged: PrismLoggedRequest; detail: string }> {
    const prism = prisms[r.vendor];
    const mark = logMark(prism);
    const answer = await send(prism.url, r);
    const logged = await loggedRequestsSince(prism, mark, 1);
    const detail = `${r.method} ${r.path} -> ${answer.status} ${answer.text.slice(0, 300)}\n${logged.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(logged, detail).toHaveLength(1);
    return { status: answer.status, logged: logged[0]!, detail };
  }

  /** `r` passes the vendor's schema with no violation, and both the mock and the simulator answer 2xx. */
  async function expectValid(r: NativeRequest): Promise<void> {
    const { status, logged, detail } = await viaPrism(r);
    expect(logged.violations, detail).toEqual([]);
    expect(logged.passed, detail).toBe(true);
    expect(logged.terminated, detail).toBeNull();
    expect(status, detail).toBeGreaterThanOrEqual(200);
    expect(status, detail).toBeLessThan(300);
    const simAnswer = await send(sim.url, r);
    expect(simAnswer.status, `simulator: ${simAnswer.text.slice(0, 500)}`).toBeGreaterThanOrEqual(200);
    expect(simAnswer.status).toBeLessThan(300);
  }

  /** Prism refuses `r` (422, or 401 for a missing key) with a violation matching `pattern`. */
  async function expectRejected(r: NativeRequest, status: number, pattern: RegExp): Promise<void> {
    const { status: got, logged, detail } = await viaPrism(r);
    expect(got, detail).toBe(status);
    expect(logged.passed, detail).toBe(false);
    expect(logged.lines.join('\n'), detail).toMatch(pattern);
  }

  it('finds every documented operation, and compiles its request body schema as Prism does (none skipped)', async () => {
    for (const vendor of Object.keys(VENDOR_SPECS) as Vendor[]) {
      const wanted = new Set(OPERATIONS[vendor]);
      const bodies = await compilePrismRequestBodies(VENDOR_SPECS[vendor], (op) => wanted.has(`${op.method} ${op.path}`));
      const withBodies = OPERATIONS[vendor].filter((op) => op.startsWith('POST'));
      expect(bodies.filter((b) => b.mediaType === 'application/json').map((b) => `${b.method} ${b.path}`).sort(), vendor).toEqual(withBodies.sort());
      expect(bodies.filter((b) => b.error).map((b) => `${b.method} ${b.path}: ${b.error}`), vendor).toEqual([]);
      expect(bodies.flatMap((b) => b.only2020.map((k) => `${b.method} ${b.path}: ${k}`)), vendor).toEqual([]);
    }
  }, 60_000);

  it.each(Object.keys(REQUESTS) as Array<keyof typeof REQUESTS>)('%s passes the vendor spec and the simulator', async (name) => {
    await expectValid(REQUESTS[name]);
  });

  // The simulator's operation-location is what the gateway follows; the GET the gateway's own client
  // sends for it is validated against Prism in prism-native-azure.test.ts ("the summarization job poll").
  it('a job poll (GET .../jobs/{jobId} from the simulator\'s operation-location) passes the Language spec', async () => {
    const accepted = await send(sim.url, REQUESTS.summarize);
    expect(accepted.status).toBe(202);
    const poll = pollRequest(String(accepted.headers['operation-location']));
    expect(poll.path).toMatch(/^\/language\/analyze-text\/jobs\/[0-9a-f-]{36}\?api-version=2026-05-01&showStats=true$/);
    await expectValid(poll);
  });

  it('negative controls: Prism rejects what the specs forbid, so the passes above mean something', async () => {
    const { input_type: _, ...noInputType } = REQUESTS.embedFloat.body;
    await expectRejected(withBody(REQUESTS.embedFloat, noInputType), 422, /input_type/);
    await expectRejected(withBody(REQUESTS.rerank, { ...REQUESTS.rerank.body, documents: [{ text: 'a' }] }), 422, /documents\.0 must be string/);
    await expectRejected({ ...REQUESTS.rerank, headers: { 'content-type': 'application/json' } }, 401, /Invalid security scheme/);
    await expectRejected(withBody(REQUESTS.moderate, { text: 'a'.repeat(10_001) }), 422, /more than 10000 characters/);
    await expectRejected({ ...REQUESTS.moderate, headers: { 'content-type': 'application/json' } }, 401, /Invalid security scheme/);
    await expectRejected(withPath(REQUESTS.moderate, '/contentsafety/text:analyze'), 422, /api-version/);
    await expectRejected(withBody(REQUESTS.translateFrom, [{ Text: 'Hello' }]), 422, /required property 'text'/);
    await expectRejected(withPath(REQUESTS.translateFrom, '/translate?api-version=3.0'), 422, /required property 'to'/);
    await expectRejected(withPath(REQUESTS.translateFrom, '/translate?api-version=3.0&to=de&textType=plain'), 422, /Plain, Html/);
    await expectRejected(withBody(REQUESTS.sentiment, { kind: 'Sentiment', analysisInput: { documents: [{ id: '1', text: 'x' }] } }), 422, /oneOf/);
    await expectRejected(withBody(REQUESTS.summarize, { ...REQUESTS.summarize.body, tasks: [{ kind: 'ExtractiveSummarization', parameters: { sentenceCount: 'two' } }] }), 422, /sentenceCount must be integer/);
    await expectRejected({ ...pollRequest('http://x/language/analyze-text/jobs/not-a-uuid?api-version=2026-05-01'), headers: AZURE_HEADERS }, 422, /format "uuid"/);
  });

  it('blind spots of Prism that the simulator covers: unknown fields, limits in descriptions, comma-joined targets, Translator keys', async () => {
    const blind: Array<[string, NativeRequest]> = [
      ['misspelt summarization parameter', withBody(REQUESTS.summarize, { ...REQUESTS.summarize.body, tasks: [{ kind: 'ExtractiveSummarization', parameters: { sentence_count: 2 } }] })],
      ['OpenAI-style embeddings field', withBody(REQUESTS.embedFloat, { ...REQUESTS.embedFloat.body, dimensions: 256 })],
      ['output_dimension 2048 (the spec lists 256, 512, 1024, 1536 in prose only)', withBody(REQUESTS.embedFloat, { ...REQUESTS.embedFloat.body, output_dimension: 2048 })],
      ['an empty text (maxItems 96 is in the schema, a nonempty rule is not)', withBody(REQUESTS.embedFloat, { ...REQUESTS.embedFloat.body, texts: ['ok', ''] })],
      ['language on a LanguageDetection document', withBody(REQUESTS.detect, { kind: 'LanguageDetection', analysisInput: { documents: [{ id: '1', text: 'x', language: 'en' }] } })],
      ['extractive sentenceCount 21 (1 to 20 lives only in Microsoft\'s docs)', withBody(REQUESTS.summarize, { ...REQUESTS.summarize.body, tasks: [{ kind: 'ExtractiveSummarization', parameters: { sentenceCount: 21 } }] })],
      ['26 summarization documents', withBody(REQUESTS.summarize, { analysisInput: { documents: Array.from({ length: 26 }, (_, i) => ({ id: String(i), text: 'x' })) }, tasks: [{ kind: 'ExtractiveSummarization' }] })],
      ['to=de,fr as one value', withPath(REQUESTS.translateFrom, '/translate?api-version=3.0&from=en&to=de,fr')],
      ['wrong api-version value', withPath(REQUESTS.moderate, CS.replace('2024-09-01', '2023-10-01'))],
      ['wrong Language api-version value', withPath(REQUESTS.keyPhrases, ANALYZE.replace('2026-05-01', '2023-04-01'))],
    ];
    for (const [what, r] of blind) {
      const { logged, detail } = await viaPrism(r);
      expect(logged.passed, `${what}: Prism passes it\n${detail}`).toBe(true);
      const simAnswer = await send(sim.url, r);
      expect(simAnswer.status, `${what}: the simulator rejects it`).toBeGreaterThanOrEqual(400);
    }
    // Translator's spec declares no security scheme: a request without any key passes Prism (the live service answers 401)
    const { logged } = await viaPrism({ ...REQUESTS.translateFrom, headers: { 'content-type': 'application/json' } });
    expect(logged.passed).toBe(true);
  });
});
