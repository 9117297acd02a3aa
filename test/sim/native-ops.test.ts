/**
 * The simulator's native vendor operations (docs/vendors/native-ops.md): Cohere /v2/embed and /v2/rerank,
 * Azure Content Safety text:analyze, Azure Translator /translate, Azure Language analyze-text and its
 * summarization jobs. Each answers in the documented shape, its billed quantity follows the input as
 * documented, invalid requests get the vendor's error shape, and faults apply.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/server.js';
import { countTextTokens } from '../../src/tokenize.js';
import { JOB_POLLS_UNTIL_DONE, textElements } from '../../src/sim/azure-language.js';
import { ANALYZE, CS, JOBS, REQUESTS, pollRequest, send, withBody, withPath, type NativeAnswer, type NativeRequest } from './native-fixtures.js';

let sim: Simulator;

beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const call = (r: NativeRequest) => send(sim.url, r);
const addFault = async (fault: SimFault, model?: string) => {
  const res = await request(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, fault }) });
  expect(res.statusCode).toBe(200);
  await res.body.dump();
};
const body = (r: NativeRequest) => structuredClone(r.body) as any;
const decodeFloat32 = (b64: string) => { const buf = Buffer.from(b64, 'base64'); return Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4)); };

/** Reads an answer whose body may be cut: the text that arrived and whether the connection broke. */
async function raw(r: NativeRequest) {
  const res = await request(`${sim.url}${r.path}`, { method: r.method, headers: r.headers, body: JSON.stringify(r.body) });
  const parts: Buffer[] = [];
  let broken = false;
  try { for await (const part of res.body) parts.push(part as Buffer); } catch { broken = true; }
  return { status: res.statusCode, headers: res.headers, broken, text: Buffer.concat(parts).toString('utf8') };
}

const expectCohereError = (res: NativeAnswer, status: number, pattern: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.json).sort()).toEqual(['id', 'message']);
  expect(res.json.message).toMatch(pattern);
};
const expectAzureError = (res: NativeAnswer, status: number, code: string, pattern?: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(res.headers['x-ms-error-code']).toBe(code);
  if (pattern) expect(JSON.stringify(res.json.error)).toMatch(pattern);
};

describe('Cohere POST /v2/embed', () => {
  it('answers embeddings by type, the texts, and meta.billed_units.input_tokens from the texts', async () => {
    const req = body(REQUESTS.embedFloat);
    const res = await call(REQUESTS.embedFloat);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ response_type: 'embeddings_by_type', texts: req.texts, meta: { api_version: { version: '2' } } });
    expect(res.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Object.keys(res.json.embeddings)).toEqual(['float']);
    expect(res.json.embeddings.float.map((v: number[]) => v.length)).toEqual([256, 256]);
    const norm = Math.sqrt(res.json.embeddings.float[0].reduce((s: number, v: number) => s + v * v, 0));
    expect(norm).toBeCloseTo(1, 5);
    expect(res.json.meta.billed_units).toEqual({ input_tokens: req.texts.reduce((n: number, t: string) => n + countTextTokens(t), 0) });
    // deterministic, and the same text gets the same vector wherever it stands
    const again = await call(withBody(REQUESTS.embedFloat, { ...req, texts: [req.texts[1], req.texts[0]] }));
    expect(again.json.embeddings.float[1]).toEqual(res.json.embeddings.float[0]);
  });

  it('answers base64 as the little-endian float32 bytes of the float embedding; default dimension 1536 for v4, 1024 for v3', async () => {
    const res = await call(REQUESTS.embedBase64);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json.embeddings).sort()).toEqual(['base64', 'float']);
    expect(decodeFloat32(res.json.embeddings.base64[0])).toEqual(res.json.embeddings.float[0]);
    expect(res.json.embeddings.float[0]).toHaveLength(1024);
    const { output_dimension: _, ...rest } = body(REQUESTS.embedBase64);
    expect((await call(withBody(REQUESTS.embedBase64, rest))).json.embeddings.float[0]).toHaveLength(1536);
    expect((await call(withBody(REQUESTS.embedBase64, { ...rest, model: 'embed-english-v3.0' }))).json.embeddings.float[0]).toHaveLength(1024);
  });

  it('bills more tokens for more text, and with truncate END bills only what a v3 model embeds (512 tokens)', async () => {
    const long = 'word '.repeat(800).trim();
    const one = await call(withBody(REQUESTS.embedFloat, { ...body(REQUESTS.embedFloat), texts: ['short'] }));
    const two = await call(withBody(REQUESTS.embedFloat, { ...body(REQUESTS.embedFloat), texts: ['short', long] }));
    expect(two.json.meta.billed_units.input_tokens).toBe(one.json.meta.billed_units.input_tokens + countTextTokens(long));
    const v3 = { model: 'embed-english-v3.0', input_type: 'classification', texts: [long] };
    expect((await call(withBody(REQUESTS.embedFloat, { ...v3, truncate: 'END' }))).json.meta.billed_units.input_tokens).toBe(512);
    expectCohereError(await call(withBody(REQUESTS.embedFloat, { ...v3, truncate: 'NONE' })), 400, /more than the maximum of 512/);
  });

  it('rejects what the spec does not allow, in Cohere\'s {id, message} shape', async () => {
    const base = body(REQUESTS.embedFloat);
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ ...base, input_type: undefined }, 400, /input_type must be specified/],
      [{ ...base, model: undefined }, 400, /model must be specified/],
      [{ ...base, model: 'embed-fast' }, 404, /model 'embed-fast' not found/],
      [{ ...base, texts: Array.from({ length: 97 }, (_, i) => `t${i}`) }, 400, /at most 96/],
      [{ ...base, texts: [] }, 400, /non-empty array/],
      [{ ...base, texts: ['ok', ''] }, 400, /empty strings/],
      [{ ...base, output_dimension: 768 }, 400, /256, 512, 1024, 1536/],
      [{ ...base, output_dimension: 2048 }, 400, /256, 512, 1024, 1536/],
      [{ ...base, model: 'embed-english-v3.0' }, 400, /only available for embed-v4/],
      [{ ...base, embedding_types: ['float32'] }, 400, /embedding_types/],
      [{ ...base, dimensions: 256 }, 400, /unknown field: dimensions/],
      [{ ...base, images: ['data:image/png;base64,AAAA'] }, 501, /not simulated/],
    ];
    for (const [b, status, pattern] of cases) expectCohereError(await call(withBody(REQUESTS.embedFloat, JSON.parse(JSON.stringify(b)))), status, pattern);
  });
});

describe('Cohere POST /v2/rerank', () => {
  it('answers results by relevance, cut to top_n, with meta.billed_units.search_units', async () => {
    const res = await call(REQUESTS.rerank);
    expect(res.status, res.text).toBe(200);
    expect(res.json.results).toHaveLength(2);
    expect(res.json.results[0].index).toBe(1); // "Paris is the capital of France."
    for (const r of res.json.results) expect(Object.keys(r).sort()).toEqual(['index', 'relevance_score']);
    expect(res.json.results[0].relevance_score).toBeGreaterThan(res.json.results[1].relevance_score);
    expect(res.json.results.every((r: any) => r.relevance_score >= 0 && r.relevance_score <= 1)).toBe(true);
    expect(res.json.meta).toEqual({ api_version: { version: '2' }, billed_units: { search_units: 1 } });
  });

  it('bills one search unit per 100 documents (500-token chunks counting as documents), whatever top_n', async () => {
    const base = body(REQUESTS.rerank);
    const docs = (n: number) => Array.from({ length: n }, (_, i) => `document number ${i}`);
    const units = async (documents: string[], top_n = 1) => {
      const res = await call(withBody(REQUESTS.rerank, { ...base, documents, top_n }));
      expect(res.status, res.text).toBe(200);
      return { units: res.json.meta.billed_units.search_units, results: res.json.results.length };
    };
    expect(await units(docs(100))).toEqual({ units: 1, results: 1 });
    expect(await units(docs(101))).toEqual({ units: 2, results: 1 });
    expect(await units(docs(1000))).toEqual({ units: 10, results: 1 });
    expect(await units(docs(1000), 1000)).toEqual({ units: 10, results: 1000 });
    const long = 'lorem '.repeat(1200); // 1,200 tokens + the query: 3 chunks of 500
    expect(await units([...docs(98), long])).toEqual({ units: 2, results: 1 });
    expect(await units(docs(3), 10)).toEqual({ units: 1, results: 3 });
  });

  it('rejects object documents, a missing query, top_n 0 and unknown fields', async () => {
    const base = body(REQUESTS.rerank);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, documents: [{ text: 'a' }] })), 400, /must be strings/);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, query: undefined })), 400, /query must be a string/);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, top_n: 0 })), 400, /top_n/);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, documents: [] })), 400, /non-empty/);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, return_documents: true })), 400, /unknown field: return_documents/);
    expectCohereError(await call(withBody(REQUESTS.rerank, { ...base, model: 'embed-v4.0' })), 404, /not found/);
  });
});

describe('Azure Content Safety POST /contentsafety/text:analyze', () => {
  it('answers categoriesAnalysis for the requested categories, severities from the text', async () => {
    const res = await call(REQUESTS.moderate);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ categoriesAnalysis: [{ category: 'Hate', severity: 2 }, { category: 'Violence', severity: 2 }] });
    const worse = await call(withBody(REQUESTS.moderate, { ...body(REQUESTS.moderate), text: 'hate hate hate, attack' }));
    expect(worse.json.categoriesAnalysis).toEqual([{ category: 'Hate', severity: 6 }, { category: 'Violence', severity: 2 }]);
    const four = await call(withBody(REQUESTS.moderate, { text: 'hate hate hate hate', categories: ['Hate'] }));
    expect(four.json.categoriesAnalysis).toEqual([{ category: 'Hate', severity: 6 }]); // FourSeverityLevels: 0, 2, 4, 6
  });

  it('scores all four categories when none are named', async () => {
    const res = await call(REQUESTS.moderateAll);
    expect(res.json.categoriesAnalysis).toEqual(['Hate', 'SelfHarm', 'Sexual', 'Violence'].map((category) => ({ category, severity: 0 })));
  });

  it('limits text to 10,000 code points (not UTF-16 units), and errors in the Azure.Core shape', async () => {
    expect((await call(withBody(REQUESTS.moderate, { text: '😀'.repeat(10_000) }))).status).toBe(200);
    expectAzureError(await call(withBody(REQUESTS.moderate, { text: 'a'.repeat(10_001) })), 400, 'InvalidRequestBody', /10000/);
    expectAzureError(await call(withBody(REQUESTS.moderate, { categories: ['Hate'] })), 400, 'InvalidRequestBody', /'text' is required/);
    expectAzureError(await call(withBody(REQUESTS.moderate, { text: 'x', categories: ['Spam'] })), 400, 'InvalidRequestBody');
    expectAzureError(await call(withBody(REQUESTS.moderate, { text: 'x', output_type: 'FourSeverityLevels' })), 400, 'InvalidRequestBody', /Unknown field 'output_type'/);
    expectAzureError(await call(withPath(REQUESTS.moderate, '/contentsafety/text:analyze?api-version=2023-10-01')), 404, '404', /Resource not found/);
    expectAzureError(await call(withPath(REQUESTS.moderate, '/contentsafety/text:analyze')), 404, '404');
  });
});

describe('Azure Translator POST /translate', () => {
  it('translates each text to each target; x-metered-usage = UTF-16 units of all texts x targets', async () => {
    const res = await call(REQUESTS.translateDetect);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([
      { detectedLanguage: { language: 'en', score: 1 }, translations: [{ text: '[de] Hello, world!', to: 'de' }, { text: '[fr] Hello, world!', to: 'fr' }] },
      { detectedLanguage: { language: 'en', score: 1 }, translations: [{ text: '[de] Emoji 👍🏽 and café', to: 'de' }, { text: '[fr] Emoji 👍🏽 and café', to: 'fr' }] },
    ]);
    // 'Hello, world!' 13 + 'Emoji 👍🏽 and café' 19 (the emoji and its skin tone are two surrogate pairs: 4), times 2 targets
    expect(res.headers['x-metered-usage']).toBe('64');
    expect(res.headers['x-mt-system']).toBe('Team,Team');
    expect(res.headers['x-requestid']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports detectedLanguage only without `from`, and counts one target once', async () => {
    const res = await call(REQUESTS.translateFrom);
    expect(res.json).toEqual([{ translations: [{ text: '[it] Good morning', to: 'it' }] }]);
    expect(res.headers['x-metered-usage']).toBe('12');
    const ja = await call(withBody(REQUESTS.translateDetect, [{ text: 'こんにちは' }]));
    expect(ja.json[0].detectedLanguage).toEqual({ language: 'ja', score: 1 });
    expect(ja.headers['x-metered-usage']).toBe('10');
  });

  it('rejects bad queries and bodies with Translator error codes', async () => {
    const fail = async (r: NativeRequest, code: number, pattern?: RegExp) => {
      const res = await call(r);
      expect(res.status, res.text).toBe(Math.floor(code / 1000));
      expect(res.json.error.code).toBe(code);
      if (pattern) expect(res.json.error.message).toMatch(pattern);
    };
    await fail(withPath(REQUESTS.translateDetect, '/translate?api-version=3.0&to=de,fr'), 400036, /repeat the parameter/);
    await fail(withPath(REQUESTS.translateDetect, '/translate?api-version=3.0'), 400036);
    await fail(withPath(REQUESTS.translateDetect, '/translate?to=de'), 400021);
    await fail(withPath(REQUESTS.translateDetect, '/translate?api-version=3.0&to=de&from=english'), 400035);
    await fail(withPath(REQUESTS.translateDetect, '/translate?api-version=3.0&to=de&textType=plain'), 400000, /Plain or Html/);
    await fail(withBody(REQUESTS.translateDetect, [{ Text: 'Hello' }]), 400000, /lower-case "text"/);
    await fail(withBody(REQUESTS.translateDetect, { text: 'Hello' }), 400000);
    await fail(withBody(REQUESTS.translateDetect, []), 400000);
    await fail(withBody(REQUESTS.translateDetect, Array.from({ length: 1001 }, () => ({ text: 'a' }))), 400077);
    // 25,001 characters to two languages is 50,002 > 50,000
    await fail(withBody(REQUESTS.translateDetect, [{ text: 'a'.repeat(25_001) }]), 400077, /50002 characters/);
    expect((await call(withBody(REQUESTS.translateDetect, [{ text: 'a'.repeat(25_000) }]))).headers['x-metered-usage']).toBe('50000');
  });

  it('serves the custom-domain path /translator/text/v3.0/translate too', async () => {
    const res = await call(withPath(REQUESTS.translateFrom, '/translator/text/v3.0/translate?api-version=3.0&from=en&to=it'));
    expect(res.status).toBe(200);
    expect(res.headers['x-metered-usage']).toBe('12');
  });
});

describe('Azure Language POST /language/:analyze-text', () => {
  it('SentimentAnalysis: per-sentence and document sentiment, offsets, and statistics with showStats', async () => {
    const res = await call(REQUESTS.sentiment);
    expect(res.status, res.text).toBe(200);
    expect(res.json.kind).toBe('SentimentAnalysisResults');
    const { documents, errors, modelVersion, statistics } = res.json.results;
    expect(errors).toEqual([]);
    expect(modelVersion).toMatch(/\S/);
    expect(documents.map((d: any) => d.sentiment)).toEqual(['mixed', 'neutral']);
    expect(documents[0].sentences.map((s: any) => [s.text, s.sentiment, s.offset, s.length])).toEqual([
      ['The food was great.', 'positive', 0, 19], ['The service was terrible.', 'negative', 20, 25],
    ]);
    for (const d of documents) expect(d).toMatchObject({ warnings: [], confidenceScores: { positive: expect.any(Number), neutral: expect.any(Number), negative: expect.any(Number) } });
    expect(documents[0].statistics).toEqual({ charactersCount: 45, transactionsCount: 1 });
    expect(statistics).toEqual({ documentsCount: 2, validDocumentsCount: 2, erroneousDocumentsCount: 0, transactionsCount: 2 });
  });

  it('EntityRecognition, KeyPhraseExtraction, PiiEntityRecognition and LanguageDetection answer their shapes', async () => {
    const ner = await call(REQUESTS.entities);
    expect(ner.json.kind).toBe('EntityRecognitionResults');
    expect(ner.json.results.documents[0].entities.map((e: any) => [e.text, e.category, e.offset, e.length])).toEqual([
      ['Satya', 'Person', 0, 5], ['Paris', 'Location', 14, 5], ['3', 'Quantity', 25, 1], ['Microsoft', 'Organization', 40, 9],
    ]);
    const kp = await call(REQUESTS.keyPhrases);
    expect(kp.json).toMatchObject({ kind: 'KeyPhraseExtractionResults', results: { documents: [{ id: '1', keyPhrases: ['quarterly', 'revenue', 'exceeded', 'every', 'forecast'] }] } });
    expect(kp.json.results.statistics).toBeUndefined(); // no showStats
    const pii = await call(REQUESTS.pii);
    expect(pii.json.kind).toBe('PiiEntityRecognitionResults');
    expect(pii.json.results.documents[0].redactedText).toBe('Mail **************** or call ***************.');
    expect(pii.json.results.documents[0].entities.map((e: any) => e.category)).toEqual(['Email', 'PhoneNumber']);
    const det = await call(REQUESTS.detect);
    expect(det.json.kind).toBe('LanguageDetectionResults');
    expect(det.json.results.documents.map((d: any) => d.detectedLanguage.iso6391Name)).toEqual(['fr', 'ja']);
  });

  it('counts text elements (grapheme clusters) per document, transactions in blocks of 1,000 rounded up', async () => {
    const family = '👩‍👩‍👧‍👦'; // one text element, seven code points, eleven UTF-16 units
    const cases: Array<[string, number, number]> = [
      ['a'.repeat(999), 999, 1], ['a'.repeat(1000), 1000, 1], ['a'.repeat(1001), 1001, 2],
      [family.repeat(1000), 1000, 1], ['👍🏽'.repeat(1001), 1001, 2], ['e\u0301'.repeat(1000), 1000, 1], ['漢字'.repeat(500), 1000, 1],
    ];
    const stats = await call(withPath(withBody(REQUESTS.keyPhrases, {
      kind: 'KeyPhraseExtraction', analysisInput: { documents: cases.map(([text], i) => ({ id: String(i), text })) },
    }), `${ANALYZE}&showStats=true`));
    expect(stats.status, stats.text).toBe(200);
    expect(stats.json.results.documents.map((d: any) => d.statistics)).toEqual(cases.map(([, chars, tx]) => ({ charactersCount: chars, transactionsCount: tx })));
    expect(cases.map(([text]) => textElements(text))).toEqual(cases.map(([, chars]) => chars));
    expect(stats.json.results.statistics.transactionsCount).toBe(cases.reduce((n, [, , tx]) => n + tx, 0));
  });

  it('counts text elements like one Intl.Segmenter pass, window by window, in linear time', () => {
    const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
    const direct = (t: string) => { let n = 0; for (const _ of segmenter.segment(t)) n += 1; return n; };
    const pool = ['a', ' ', 'é', 'e\u0301', '\r\n', '\r', '\n', '👍🏽', '👩‍👩‍👧‍👦', '🇫', '🇷', '\u200d', '\u1100', '\u1161', '\u11a8', '한', 'क', '\u094d', 'ष', '漢', '\u0600', 'ب', '\u0301', '\ufe0f', '#\ufe0f\u20e3', '\u0e33', '\ud83d', '\udc4d'];
    let seed = 42;
    const next = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed; };
    for (let round = 0; round < 40; round++) {
      let text = '';
      const length = 200 + (next() % 3000);
      while (text.length < length) text += pool[next() % pool.length];
      expect(textElements(text), JSON.stringify(text.slice(0, 80))).toBe(direct(text));
    }
    const t0 = Date.now();
    expect(textElements('👩‍👩‍👧‍👦'.repeat(20_000) + 'a'.repeat(100_000))).toBe(120_000);
    expect(Date.now() - t0).toBeLessThan(2000); // a single segmenter pass takes seconds here (Node 20)
  });

  it('reports failed documents in results.errors and leaves them out of the statistics', async () => {
    const res = await call(withBody(REQUESTS.sentiment, {
      kind: 'SentimentAnalysis',
      analysisInput: { documents: [{ id: 'ok', text: 'Good.' }, { id: 'empty', text: '' }, { id: 'bad', text: 'please sim:fail this' }, { id: 'big', text: 'a'.repeat(5121) }] },
    }));
    expect(res.status, res.text).toBe(200);
    expect(res.json.results.documents.map((d: any) => d.id)).toEqual(['ok']);
    expect(res.json.results.errors.map((e: any) => [e.id, e.error.code, e.error.innererror.code])).toEqual([
      ['empty', 'InvalidArgument', 'InvalidDocument'], ['bad', 'InvalidArgument', 'InvalidDocument'], ['big', 'InvalidArgument', 'InvalidDocument'],
    ]);
    expect(res.json.results.errors[0].error.innererror.message).toBe('Document text is empty.');
    expect(res.json.results.errors[2].error.innererror.message).toMatch(/5120 text elements/);
    expect(res.json.results.statistics).toEqual({ documentsCount: 4, validDocumentsCount: 1, erroneousDocumentsCount: 3, transactionsCount: 1 });
  });

  it('rejects bad requests in the Azure.Core shape with an innererror', async () => {
    const six = { kind: 'EntityRecognition', analysisInput: { documents: Array.from({ length: 6 }, (_, i) => ({ id: String(i), text: 'x' })) } };
    expectAzureError(await call(withBody(REQUESTS.entities, six)), 400, 'InvalidRequest', /Max 5 records/);
    expectAzureError(await call(withBody(REQUESTS.entities, { kind: 'EntityRecognition', analysisInput: { documents: [] } })), 400, 'InvalidRequest', /MissingInputDocuments/);
    expectAzureError(await call(withBody(REQUESTS.entities, { kind: 'Summarize', analysisInput: { documents: [{ id: '1', text: 'x' }] } })), 400, 'InvalidRequest', /'kind' must be one of/);
    expectAzureError(await call(withBody(REQUESTS.entities, { kind: 'SentimentAnalysis', parameters: { opinion_mining: true }, analysisInput: { documents: [{ id: '1', text: 'x' }] } })), 400, 'InvalidRequest', /Unknown parameter 'opinion_mining'/);
    expectAzureError(await call(withBody(REQUESTS.entities, { kind: 'LanguageDetection', analysisInput: { documents: [{ id: '1', text: 'x', language: 'en' }] } })), 400, 'InvalidRequest', /Unknown field 'language'/);
    expectAzureError(await call(withBody(REQUESTS.entities, { kind: 'KeyPhraseExtraction', analysisInput: { documents: [{ id: '1', text: 'x' }, { id: '1', text: 'y' }] } })), 400, 'InvalidRequest', /duplicated Ids/);
    expectAzureError(await call(withPath(REQUESTS.entities, '/language/:analyze-text?api-version=2023-04-01')), 404, '404');
  });
});

describe('Azure Language summarization jobs', () => {
  const submit = async (r: NativeRequest = REQUESTS.summarize) => {
    const res = await call(r);
    expect(res.status, res.text).toBe(202);
    return res;
  };

  it('answers 202 with an empty body and operation-location; polls run, then succeed with both tasks', async () => {
    const accepted = await submit();
    expect(accepted.text).toBe('');
    const location = String(accepted.headers['operation-location']);
    expect(location).toMatch(new RegExp(`^${sim.url}/language/analyze-text/jobs/[0-9a-f-]{36}\\?api-version=2026-05-01$`));
    const states: any[] = [];
    for (let i = 0; i < JOB_POLLS_UNTIL_DONE + 1; i++) states.push((await call(pollRequest(location))).json);
    expect(states.map((s) => s.status)).toEqual(['running', 'succeeded', 'succeeded']);
    expect(states[0].tasks).toEqual({ completed: 0, failed: 0, inProgress: 2, total: 2 });
    const done = states[1];
    expect(done).toMatchObject({ jobId: location.split('/').at(-1)!.split('?')[0], displayName: 'gateway summarize', errors: [], tasks: { completed: 2, failed: 0, inProgress: 0, total: 2 } });
    expect(done.tasks.items.map((t: any) => [t.kind, t.taskName, t.status])).toEqual([
      ['ExtractiveSummarizationLROResults', 'extract', 'succeeded'], ['AbstractiveSummarizationLROResults', 'abstract', 'succeeded'],
    ]);
    const input = body(REQUESTS.summarize).analysisInput.documents[0].text as string;
    const [extract, abstract] = done.tasks.items.map((t: any) => t.results);
    const sentences = extract.documents[0].sentences;
    expect(sentences).toHaveLength(2);
    expect(sentences[0].rankScore).toBeGreaterThanOrEqual(sentences[1].rankScore); // sortBy Rank
    for (const s of sentences) expect(input.slice(s.offset, s.offset + s.length)).toBe(s.text);
    const summary = abstract.documents[0].summaries[0].text as string;
    expect(summary.split(' ')).toHaveLength(13); // "Summary:" + 12 words (short)
    // statistics: input and summary together, 1,000-element records
    const inputElements = textElements(input);
    expect(extract.documents[0].statistics).toEqual({ charactersCount: inputElements, transactionsCount: 1 });
    expect(abstract.documents[0].statistics).toEqual({ charactersCount: inputElements, transactionsCount: 1 });
    expect(done.statistics).toEqual({ documentsCount: 1, validDocumentsCount: 1, erroneousDocumentsCount: 0, transactionsCount: 2 });
    // without showStats: no statistics anywhere
    const plain = (await call(pollRequest(location, false))).json;
    expect(plain.statistics).toBeUndefined();
    expect(plain.tasks.items[0].results.statistics).toBeUndefined();
  });

  it('counts the summary into the document\'s transactions (999 input elements + summary = 2 records)', async () => {
    const text = `${'word '.repeat(199)}word`; // 999 elements
    expect(textElements(text)).toBe(999);
    const accepted = await submit(withBody(REQUESTS.summarize, { analysisInput: { documents: [{ id: 'd', text }] }, tasks: [{ kind: 'AbstractiveSummarization', parameters: { summaryLength: 'long' } }] }));
    const location = String(accepted.headers['operation-location']);
    await call(pollRequest(location));
    const done = (await call(pollRequest(location))).json;
    const doc = done.tasks.items[0].results.documents[0];
    expect(doc.statistics).toEqual({ charactersCount: 999, transactionsCount: 2 });
    expect(textElements(doc.summaries[0].text)).toBe('Summary: '.length + 48 * 5 - 1);
  });

  it('reports failed documents per task; a failed task makes the job partiallyCompleted or failed', async () => {
    const docs = [{ id: 'ok', text: 'One sentence here. Another one there.' }, { id: 'empty', text: '  ' }];
    const extract = { kind: 'ExtractiveSummarization', parameters: { sentenceCount: 1 } };
    const run = async (b: unknown) => {
      const location = String((await submit(withBody(REQUESTS.summarize, b))).headers['operation-location']);
      for (let i = 1; i < JOB_POLLS_UNTIL_DONE; i++) await call(pollRequest(location));
      return (await call(pollRequest(location))).json;
    };
    const withErrors = await run({ analysisInput: { documents: docs }, tasks: [extract] });
    expect(withErrors.status).toBe('succeeded');
    const results = withErrors.tasks.items[0].results;
    expect(results.documents.map((d: any) => d.id)).toEqual(['ok']);
    expect(results.errors.map((e: any) => [e.id, e.error.innererror.code])).toEqual([['empty', 'InvalidDocument']]);
    expect(results.statistics).toMatchObject({ documentsCount: 2, validDocumentsCount: 1, erroneousDocumentsCount: 1, transactionsCount: 1 });

    const failing = [{ id: 'x', text: 'This one has sim:fail-task inside.' }];
    const partial = await run({ analysisInput: { documents: failing }, tasks: [extract, { kind: 'AbstractiveSummarization', taskName: 'abs' }] });
    expect(partial.status).toBe('partiallyCompleted');
    expect(partial.tasks).toMatchObject({ completed: 1, failed: 1, total: 2 });
    expect(partial.tasks.items[1]).toMatchObject({ kind: 'AbstractiveSummarizationLROResults', taskName: 'abs', status: 'failed' });
    expect(partial.tasks.items[1].results).toBeUndefined();
    expect(partial.errors).toHaveLength(1);
    const failed = await run({ analysisInput: { documents: failing }, tasks: [extract] });
    expect(failed.status).toBe('failed');
    expect(failed.statistics.transactionsCount).toBe(0);
  });

  it('rejects bad jobs and unknown job ids', async () => {
    const doc = { analysisInput: { documents: [{ id: '1', text: 'x' }] } };
    expectAzureError(await call(withBody(REQUESTS.summarize, { ...doc, tasks: [{ kind: 'ExtractiveSummarization', parameters: { sentenceCount: 21 } }] })), 400, 'InvalidRequest', /from 1 to 20/);
    expectAzureError(await call(withBody(REQUESTS.summarize, { ...doc, tasks: [{ kind: 'ExtractiveSummarization', parameters: { sort_by: 'Rank' } }] })), 400, 'InvalidRequest', /Unknown parameter 'sort_by'/);
    expectAzureError(await call(withBody(REQUESTS.summarize, { ...doc, tasks: [{ kind: 'AbstractiveSummarization', parameters: { summaryLength: 'tiny' } }] })), 400, 'InvalidRequest');
    expectAzureError(await call(withBody(REQUESTS.summarize, { ...doc, tasks: [] })), 400, 'InvalidRequest');
    const many = { analysisInput: { documents: Array.from({ length: 26 }, (_, i) => ({ id: String(i), text: 'x' })) }, tasks: [{ kind: 'ExtractiveSummarization' }] };
    expectAzureError(await call(withBody(REQUESTS.summarize, many)), 400, 'InvalidRequest', /Max 25 records/);
    const huge = { analysisInput: { documents: [{ id: '1', text: 'a'.repeat(125_001) }] }, tasks: [{ kind: 'ExtractiveSummarization' }] };
    expectAzureError(await call(withBody(REQUESTS.summarize, huge)), 400, 'InvalidRequest', /125000/);
    expectAzureError(await call(pollRequest(`${sim.url}/language/analyze-text/jobs/00000000-0000-4000-8000-000000000000?api-version=2026-05-01`)), 404, 'NotFound');
    // a reset forgets the jobs
    const location = String((await submit()).headers['operation-location']);
    await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump());
    expect((await call(pollRequest(location))).status).toBe(404);
    expect((await call(withPath(REQUESTS.summarize, JOBS.replace('2026-05-01', '2024-11-01')))).status).toBe(404);
  });
});

describe('faults on the native operations', () => {
  it('answers a status fault in each vendor\'s error shape; Cohere faults scope by model, Azure ones by service name', async () => {
    await addFault({ status: 503 }, 'rerank-v3.5');
    expect((await call(REQUESTS.embedFloat)).status).toBe(200);
    expectCohereError(await call(REQUESTS.rerank), 503, /service unavailable/);

    await addFault({ status: 429, times: 1 }, 'azure-translator');
    expect((await call(REQUESTS.moderate)).status).toBe(200);
    const limited = await call(REQUESTS.translateFrom);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: { code: 429000, message: expect.stringMatching(/exceeded request limits/) } });
    expect(limited.headers['retry-after']).toBe('7');
    expect((await call(REQUESTS.translateFrom)).status).toBe(200);

    await addFault({ status: 500, times: 1 }, 'azure-content-safety');
    expectAzureError(await call(REQUESTS.moderate), 500, 'InternalServerError');
  });

  it('applies latency, and a status fault on a job poll', async () => {
    await addFault({ latency_ms: 150, times: 1 }, 'azure-language');
    const t0 = Date.now();
    const location = String((await call(REQUESTS.summarize)).headers['operation-location']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await addFault({ status: 503, times: 1 }, 'azure-language');
    expectAzureError(await call(pollRequest(location)), 503, 'ServiceUnavailable');
    expect((await call(pollRequest(location))).json.status).toBe('running'); // the failed poll did not count
  });

  it('omit_usage drops the billed quantity: Cohere billed_units, the x-metered-usage header, Language statistics', async () => {
    await addFault({ omit_usage: true });
    const embed = await call(REQUESTS.embedFloat);
    expect(embed.json.meta).toEqual({ api_version: { version: '2' } });
    expect((await call(REQUESTS.rerank)).json.meta.billed_units).toBeUndefined();
    const translated = await call(REQUESTS.translateFrom);
    expect(translated.status).toBe(200);
    expect(translated.headers['x-metered-usage']).toBeUndefined();
    expect((await call(REQUESTS.sentiment)).json.results.statistics).toBeUndefined();
  });

  it('truncate_after_chunks cuts a JSON body and drops the connection; error_after_chunks ends it early (malformed JSON, 200)', async () => {
    await addFault({ truncate_after_chunks: 1, times: 1 }, 'embed-v4.0');
    const cut = await raw(REQUESTS.embedFloat);
    expect(cut.status).toBe(200);
    expect(cut.broken).toBe(true);
    expect(() => JSON.parse(cut.text)).toThrow();

    await addFault({ error_after_chunks: 2, times: 1 }, 'azure-translator');
    const malformed = await raw(REQUESTS.translateDetect);
    expect(malformed).toMatchObject({ status: 200, broken: false });
    expect(malformed.headers['content-type']).toBe('application/json');
    expect(malformed.headers['x-metered-usage']).toBe('64');
    expect(() => JSON.parse(malformed.text)).toThrow();
    expect(malformed.text.length).toBeGreaterThan(0);

    // without a fault the same answers are whole
    expect(JSON.parse((await raw(REQUESTS.embedFloat)).text).meta.billed_units.input_tokens).toBeGreaterThan(0);
  });

  it('404s a known path with the wrong method, in the simulator\'s usual shape', async () => {
    const res = await call({ ...REQUESTS.moderate, method: 'GET', body: undefined });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('unknown_url');
    expect(CS).toContain('text:analyze');
  });
});
