/**
 * The upstream requests of the native vendor operations, exactly as docs/vendors/native-ops.md
 * describes them: test/sim/native-ops.test.ts sends them to the simulator and
 * test/contract/prism-native-vendors.test.ts sends the same ones to Prism playing each vendor from its
 * published spec, which proves the documented request shapes (paths, query, headers, bodies) are right.
 */
import { request } from 'undici';

export type Vendor = 'cohere' | 'content-safety' | 'translator' | 'language';

/** One upstream request: method, path with its query string, headers and JSON body. */
export interface NativeRequest {
  vendor: Vendor;
  method: 'GET' | 'POST';
  /** Path and query, e.g. `/translate?api-version=3.0&to=de`. */
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** Auth headers as the gateway sends them to the real vendors (the simulator ignores them; Prism checks them). */
export const COHERE_HEADERS = { authorization: 'Bearer co-test-not-real' };
export const AZURE_HEADERS = { 'ocp-apim-subscription-key': 'azure-test-not-real' };
export const TRANSLATOR_HEADERS = { ...AZURE_HEADERS, 'ocp-apim-subscription-region': 'westeurope' };

const post = <B>(vendor: Vendor, path: string, body: B): NativeRequest & { body: B } => ({
  vendor, method: 'POST', path, body,
  headers: { 'content-type': 'application/json', ...(vendor === 'cohere' ? COHERE_HEADERS : vendor === 'translator' ? TRANSLATOR_HEADERS : AZURE_HEADERS) },
});

export const CS = '/contentsafety/text:analyze?api-version=2024-09-01';
export const ANALYZE = '/language/:analyze-text?api-version=2026-05-01';
export const JOBS = '/language/analyze-text/jobs?api-version=2026-05-01';

const docs = (...texts: string[]) => ({ documents: texts.map((text, i) => ({ id: String(i + 1), text, language: 'en' })) });

/** Every request shape the simulator tests use, by name. */
export const REQUESTS = {
  embedFloat: post('cohere', '/v2/embed', {
    model: 'embed-v4.0', texts: ['hello world', 'goodbye, cruel world'], input_type: 'search_document',
    embedding_types: ['float'], output_dimension: 256, truncate: 'NONE',
  }),
  embedBase64: post('cohere', '/v2/embed', {
    model: 'embed-v4.0', texts: ['hello world'], input_type: 'search_query', embedding_types: ['float', 'base64'], output_dimension: 1024,
  }),
  rerank: post('cohere', '/v2/rerank', {
    model: 'rerank-v3.5', query: 'What is the capital of France?', top_n: 2,
    documents: ['Berlin is the capital of Germany.', 'Paris is the capital of France.', 'The capital of Spain is Madrid.'],
  }),
  moderate: post('content-safety', CS, { text: 'I will attack them and I hate them.', categories: ['Hate', 'Violence'], outputType: 'EightSeverityLevels' }),
  moderateAll: post('content-safety', CS, { text: 'A calm afternoon in the park.' }),
  translateDetect: post('translator', '/translate?api-version=3.0&to=de&to=fr', [{ text: 'Hello, world!' }, { text: 'Emoji 👍🏽 and café' }]),
  translateFrom: post('translator', '/translate?api-version=3.0&from=en&to=it', [{ text: 'Good morning' }]),
  sentiment: post('language', `${ANALYZE}&showStats=true`, {
    kind: 'SentimentAnalysis', parameters: { modelVersion: 'latest', opinionMining: false },
    analysisInput: docs('The food was great. The service was terrible.', 'It is a table.'),
  }),
  entities: post('language', `${ANALYZE}&showStats=true`, {
    kind: 'EntityRecognition', parameters: { stringIndexType: 'UnicodeCodePoint' }, analysisInput: docs('Satya went to Paris with 3 friends from Microsoft.'),
  }),
  keyPhrases: post('language', ANALYZE, { kind: 'KeyPhraseExtraction', analysisInput: docs('The quarterly revenue exceeded every forecast.') }),
  pii: post('language', `${ANALYZE}&showStats=true`, {
    kind: 'PiiEntityRecognition', parameters: { domain: 'none', piiCategories: ['Email', 'PhoneNumber'] },
    analysisInput: docs('Mail jane@example.com or call +1 425 555 0100.'),
  }),
  detect: post('language', `${ANALYZE}&showStats=true`, {
    kind: 'LanguageDetection', analysisInput: { documents: [{ id: 'a', text: 'Bonjour, je suis content.', countryHint: 'FR' }, { id: 'b', text: 'こんにちは' }] },
  }),
  summarize: post('language', JOBS, {
    displayName: 'gateway summarize',
    analysisInput: docs('Contoso launched a new product. Sales rose sharply in the first week. Analysts expect growth to continue. Competitors are watching closely.'),
    tasks: [
      { kind: 'ExtractiveSummarization', taskName: 'extract', parameters: { sentenceCount: 2, sortBy: 'Rank' } },
      { kind: 'AbstractiveSummarization', taskName: 'abstract', parameters: { summaryLength: 'short' } },
    ],
  }),
} satisfies Record<string, NativeRequest>;

/** The poll of a job, from its `operation-location` (any origin: the path and query are kept). */
export function pollRequest(operationLocation: string, showStats = true): NativeRequest {
  const url = new URL(operationLocation);
  return { vendor: 'language', method: 'GET', path: `${url.pathname}${url.search}${showStats ? '&showStats=true' : ''}`, headers: { ...AZURE_HEADERS } };
}

/** One answer, read whole. */
export interface NativeAnswer { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }

/** Sends `r` to `base` (a simulator or a Prism mock). */
export async function send(base: string, r: NativeRequest): Promise<NativeAnswer> {
  const res = await request(`${base}${r.path}`, { method: r.method, headers: r.headers, body: r.body === undefined ? undefined : JSON.stringify(r.body) });
  const text = await res.body.text();
  let json: unknown;
  try { json = text === '' ? undefined : JSON.parse(text); } catch { json = undefined; }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** `r` with its body replaced. */
export function withBody(r: NativeRequest, body: unknown): NativeRequest {
  return { ...r, body };
}

/** `r` with another path (query included). */
export function withPath(r: NativeRequest, path: string): NativeRequest {
  return { ...r, path };
}
