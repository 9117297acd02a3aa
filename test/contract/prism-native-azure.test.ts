/**
 * Contract for moderation (text and image) and language analysis (issues 9, 10; spec 4.10, 4.11): the gateway's own upstream
 * requests, sent with real-looking keys to Prism mocks playing Azure AI Content Safety and Azure AI
 * Language from their published specs (../shared/specs/azure, the `*.prism-oas3.json` copies whose paths
 * carry the service prefix), validate with no violation and reach the expected path with the
 * Ocp-Apim-Subscription-Key header. The mocks' answers are placeholders (a job's operation-location is
 * http://example.com, which the gateway refuses to follow), so the client's answer is not the point
 * here: the simulator and test/e2e/{moderations,language}.test.ts check answers and billing.
 *
 * The summarization job's poll is checked on its own, as prism-azure-document-intelligence.test.ts
 * does: the gateway's own UpstreamClient (`poll()`, what src/pipeline/forward/poll.ts calls for each
 * poll) GETs the operation-location a real resource answers, `/language/analyze-text/jobs/{jobId}` with
 * the manifest's api-version, on the mock's origin; Prism must log it with no violation and the key.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayRequestAsLogged, loggedRequestsSince, logMark, startPrismMock, stopChild, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';
import { png } from '../helpers/images.js';

const SPECS = resolve(projectRoot(), '../shared/specs/azure');
const CONTENT_SAFETY_SPEC = resolve(SPECS, 'content-safety/contentsafety.prism-oas3.json');
const LANGUAGE_SPEC = resolve(SPECS, 'language/analyzetext-2026-05-01.prism-oas3.json');

describe.runIf(storeKind === 'pglite')('Prism vendor contract: the Azure Content Safety and Language requests validate against the vendors\' specs', () => {
  let safety: PrismProcess;
  let language: PrismProcess;
  let t: TestGateway;
  let key: string;

  beforeAll(async () => {
    [safety, language] = await Promise.all([startPrismMock(CONTENT_SAFETY_SPEC), startPrismMock(LANGUAGE_SPEC)]);
    t = await startTestGateway({
      env: {
        AZURE_CONTENT_SAFETY_KEY: 'safety-test-not-real', AZURE_CONTENT_SAFETY_ENDPOINT: safety.url,
        AZURE_LANGUAGE_KEY: 'language-test-not-real', AZURE_LANGUAGE_ENDPOINT: language.url,
      },
    });
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await Promise.all([stopChild(safety?.child), stopChild(language?.child)]);
  }, 60_000);

  /** Sends a client request through the gateway; returns the one request the vendor's mock logged, checked clean and keyed. */
  async function upstreamOf(vendor: PrismProcess, route: string, body: unknown, path: string): Promise<{ logged: PrismLoggedRequest; status: number }> {
    const result = await gatewayRequestAsLogged(t.url, key, vendor, route, body, path);
    expect(result.logged.lines.join('\n')).toMatch(/ocp-apim-subscription-key: (safety|language)-test-not-real/);
    return result;
  }

  it('moderation: POST /contentsafety/text:analyze with the text and categories', async () => {
    const { logged } = await upstreamOf(safety, '/v1/moderations', { text: 'I will attack them.', categories: ['Hate', 'Violence'] }, '/contentsafety/text:analyze');
    expect(logged.lines.join('\n')).toContain('Body: {"text":"I will attack them.","categories":["Hate","Violence"]}');
  });

  it('image moderation: POST /contentsafety/image:analyze with the image content (a data URL\'s prefix stripped) and categories', async () => {
    const image = png(64, 64, 8).toString('base64');
    const { logged } = await upstreamOf(safety, '/v1/moderations', { image: `data:image/png;base64,${image}`, categories: ['Sexual'] }, '/contentsafety/image:analyze');
    expect(logged.lines.join('\n')).toContain(`Body: {"image":{"content":"${image}"},"categories":["Sexual"]}`);
  });

  it('analysis: POST /language/:analyze-text, one task per kind, the documents with their language', async () => {
    const bodies: Array<[Record<string, unknown>, string]> = [
      [{ text: ['The food was great.', 'The service was terrible.'], language: 'en' },
        '{"kind":"SentimentAnalysis","analysisInput":{"documents":[{"id":"0","text":"The food was great.","language":"en"},{"id":"1","text":"The service was terrible.","language":"en"}]},"parameters":{"stringIndexType":"UnicodeCodePoint"}}'],
      [{ kind: 'EntityRecognition', text: 'Satya went to Paris.' }, '"kind":"EntityRecognition"'],
      [{ kind: 'KeyPhraseExtraction', text: 'Quarterly revenue exceeded every forecast.' }, '"kind":"KeyPhraseExtraction"'],
      [{ kind: 'PiiEntityRecognition', text: 'Mail jane@example.com.' }, '"language":"auto"'],
      [{ kind: 'LanguageDetection', text: ['Bonjour', 'Hello'] }, '{"kind":"LanguageDetection","analysisInput":{"documents":[{"id":"0","text":"Bonjour"},{"id":"1","text":"Hello"}]}}'],
    ];
    for (const [body, expected] of bodies) {
      const { logged } = await upstreamOf(language, '/v1/language/analyze', body, '/language/:analyze-text');
      expect(logged.lines.join('\n')).toContain(expected);
    }
  });

  it('summarization: POST /language/analyze-text/jobs with one extractive or abstractive task (the mock\'s job location is not followed)', async () => {
    const extractive = await upstreamOf(language, '/v1/language/summarize', { text: ['Sales rose. Costs fell.'], sentence_count: 2, sort_by: 'Rank', language: 'en' }, '/language/analyze-text/jobs');
    expect(extractive.logged.lines.join('\n')).toContain('"tasks":[{"kind":"ExtractiveSummarization","taskName":"summarize","parameters":{"sentenceCount":2,"sortBy":"Rank","stringIndexType":"UnicodeCodePoint"}}]');
    // The mock answers 202 with operation-location http://example.com: another host, never polled (502, nothing charged).
    expect(extractive.status).toBe(502);
    const abstractive = await upstreamOf(language, '/v1/language/summarize', { text: 'Sales rose. Costs fell.', summary_length: 'short' }, '/language/analyze-text/jobs');
    expect(abstractive.logged.lines.join('\n')).toContain('"tasks":[{"kind":"AbstractiveSummarization","taskName":"summarize","parameters":{"summaryLength":"short","stringIndexType":"UnicodeCodePoint"}}]');
  });

  it('the summarization job poll: GET /language/analyze-text/jobs/{jobId} as the gateway sends it validates', async () => {
    const provider = t.gw.generation().gateway.providers.get('azure_language')!;
    // The operation-location a real resource answers carries the api-version the job was created with.
    const version = new URLSearchParams(provider.operations.summarize!.query).get('api-version');
    expect(version).toBe('2026-05-01');
    const jobId = randomUUID();
    const mark = logMark(language);
    const answer = await t.gw.runtime.upstream.poll(provider, `${language.url}/language/analyze-text/jobs/${jobId}?api-version=${version}`, new AbortController().signal);
    const text = await answer.body.text();
    const [logged, ...rest] = await loggedRequestsSince(language, mark, 1);
    const detail = `${answer.status}: ${text.slice(0, 300)}\n${logged?.lines.join('\n')}`;
    expect(rest, detail).toEqual([]);
    expect(`${logged!.method} ${logged!.path}`, detail).toBe(`GET /language/analyze-text/jobs/${jobId}`);
    expect([logged!.violations, logged!.passed], detail).toEqual([[], true]);
    expect(logged!.headers['ocp-apim-subscription-key'], detail).toBe('language-test-not-real');
    expect(answer.status, detail).toBe(200);
    // The validation has teeth: a job id that is not the spec's uuid, or no api-version, is refused.
    for (const bad of [`/language/analyze-text/jobs/not-a-uuid?api-version=${version}`, `/language/analyze-text/jobs/${jobId}`]) {
      const wrong = await t.gw.runtime.upstream.poll(provider, `${language.url}${bad}`, new AbortController().signal);
      await wrong.body.dump();
      expect(wrong.status, bad).toBe(422);
    }
  });
});
