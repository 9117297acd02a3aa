/**
 * POST /v1/language/analyze and /v1/language/summarize end to end (issue 9; spec 1 and 4.10): real HTTP
 * through the gateway to the simulator playing Azure AI Language (synchronous analyze-text, and the
 * summarization jobs polled inside the request). Billing is exact, per text record: each document's
 * Unicode text elements (grapheme clusters) in blocks of 1,000, rounded up, each document on its own;
 * a summary counts with its document; a document the upstream failed, or a job that failed or ran past
 * its deadline, is not billed. Bad input is a 400 naming the parameter with nothing reserved or charged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { textElements } from '../../src/meters/counters/text-elements.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';

type Answer = JsonAnswer;

/** $1.00 per 1,000 text records: one record is $0.001. */
const RECORD_NANO = 1_000_000n;
const BALANCE = 1_000_000_000n;

const THUMBS_MEDIUM = '\u{1F44D}\u{1F3FD}'; // 2 code points, 4 UTF-16 units, 1 text element
const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // ZWJ sequence: 7 code points, 1 element
const E_ACUTE = 'e\u0301'; // combining mark: 2 code points, 1 element

/** The routes' response schemas (the OpenAPI document's): every 200 answer must satisfy its route's. */
const ajv = new Ajv2020({ strict: false });
const RESPONSE_SCHEMAS: Record<string, ReturnType<typeof ajv.compile>> = Object.fromEntries(['analyze', 'summarize'].map((name) => [
  `/v1/language/${name}`, ajv.compile(JSON.parse(readFileSync(join(projectRoot(), `schemas/native-json/language-${name}-response.json`), 'utf8'))),
]));

function post(t: TestGateway, path: string, key: string, body: unknown): Promise<Answer> {
  return postJson(t, path, key, body, (a) => {
    const valid = RESPONSE_SCHEMAS[path]!;
    if (a.status === 200) expect(valid(a.json), JSON.stringify(valid.errors)).toBe(true);
  });
}

async function lastUpstream(t: TestGateway): Promise<{ path: string; body: any }> {
  return (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;
}

async function usageRows(t: TestGateway, account: { id: string }): Promise<Array<{ kind: string; unit: string; quantity: bigint; amount: bigint; model: string }>> {
  return (await t.usage(account.id)).data.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model }));
}

function untouched(t: TestGateway, account: { id: string }, balanceNano = BALANCE): Promise<void> {
  return expectUntouched(t, account, balanceNano);
}

/** Checks the settled bill of one request: headers, one usage row, the balance, nothing held. */
async function billed(t: TestGateway, account: { id: string }, a: Answer, records: number, kind: string): Promise<void> {
  expect(a.json.usage.text_records).toBe(records);
  expect(a.headers.get('x-gateway-text-records')).toBe(String(records));
  const amount = RECORD_NANO * BigInt(records);
  expect(await usageRows(t, account)).toEqual([{ kind, unit: 'text_record', quantity: BigInt(records), amount, model: 'language-standard' }]);
  expect(await t.settled(account.id)).toMatchObject({ balanceNano: BALANCE - amount, heldNano: 0n, openHolds: 0 });
}

describeStore(`language analysis (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });
  const analyze = (key: string, body: unknown) => post(t, '/v1/language/analyze', key, body);

  it('bills 999, 1,000 and 1,001 text elements as 1, 1 and 2 records, each document on its own', async () => {
    const account = await t.account('1');
    const a = await analyze(account.key, { text: ['a'.repeat(999), 'b'.repeat(1000), 'c'.repeat(1001)] });
    expect(a.status, JSON.stringify(a.json).slice(0, 300)).toBe(200);
    expect(a.json).toMatchObject({ object: 'language.analysis', model: 'language-standard', kind: 'SentimentAnalysis', errors: [] });
    expect(a.json.documents.map((d: any) => d.index)).toEqual([0, 1, 2]);
    expect(a.json.usage).toEqual({ input_elements: 3000, output_elements: 0, text_records: 4 });
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.004');
    await billed(t, account, a, 4, 'language-analyze');
    // Two documents of 500 elements are two records, not one: documents are never pooled.
    const pooled = await t.account('1');
    const b = await analyze(pooled.key, { kind: 'KeyPhraseExtraction', text: ['a'.repeat(500), 'b'.repeat(500)] });
    expect(b.json.usage).toEqual({ input_elements: 1000, output_elements: 0, text_records: 2 });
    await billed(t, pooled, b, 2, 'language-analyze');
  });

  it('counts grapheme clusters: emoji with skin tones, ZWJ sequences, combining marks and CJK are one element each', async () => {
    const account = await t.account('1');
    const texts = [
      THUMBS_MEDIUM.repeat(1000), // 1,000 elements (2,000 code points, 4,000 UTF-16 units): 1 record
      FAMILY.repeat(1001), // 1,001 elements (7,007 code points): 2 records
      E_ACUTE.repeat(999), // 999 elements (1,998 code points): 1 record
      '中文'.repeat(500), // 1,000 elements: 1 record
    ];
    const a = await analyze(account.key, { kind: 'LanguageDetection', text: texts });
    expect(a.status, JSON.stringify(a.json).slice(0, 300)).toBe(200);
    expect(a.json.usage).toEqual({ input_elements: 4000, output_elements: 0, text_records: 5 });
    expect(a.json.documents[3].detected_language).toMatchObject({ iso6391_name: 'zh_chs' });
    await billed(t, account, a, 5, 'language-analyze');
  });

  it('bills nothing for an empty document or one the upstream failed, and reports why', async () => {
    const account = await t.account('1');
    // The simulator fails a document that is empty or blank, or that contains "sim:fail".
    const a = await analyze(account.key, { text: ['The food was great.', '', 'This one sim:fail breaks.', 'The service was terrible.'], language: 'en' });
    expect(a.status).toBe(200);
    expect(a.json.documents.map((d: any) => [d.index, d.sentiment])).toEqual([[0, 'positive'], [3, 'negative']]);
    expect(a.json.errors).toEqual([
      { index: 1, code: 'InvalidDocument', message: 'Document text is empty.' },
      { index: 2, code: 'InvalidDocument', message: expect.stringContaining('could not be processed') },
    ]);
    expect(a.json.usage).toEqual({ input_elements: 19 + 25, output_elements: 0, text_records: 2 });
    await billed(t, account, a, 2, 'language-analyze');
  });

  it('charges nothing when every document fails', async () => {
    const account = await t.account('1');
    const a = await analyze(account.key, { text: ['', '   ', 'sim:fail'] });
    expect(a.status).toBe(200);
    expect(a.json.documents).toEqual([]);
    expect(a.json.errors.map((e: any) => e.index)).toEqual([0, 1, 2]);
    expect(a.json.usage).toEqual({ input_elements: 0, output_elements: 0, text_records: 0 });
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0');
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: BALANCE, heldNano: 0n, openHolds: 0 });
    // The request succeeded with nothing billable: one usage row of 0 records and $0.
    expect(await usageRows(t, account)).toEqual([{ kind: 'language-analyze', unit: 'text_record', quantity: 0n, amount: 0n, model: 'language-standard' }]);
  });

  it('runs each kind, sends the language hint (or auto) and asks for code-point offsets', async () => {
    const account = await t.account('1');
    const entities = await analyze(account.key, { kind: 'EntityRecognition', text: 'Satya went to Paris with 3 friends from Microsoft.', language: 'en' });
    expect(entities.status).toBe(200);
    expect(entities.json.documents[0].entities).toContainEqual({ text: 'Paris', category: 'Location', offset: 14, length: 5, confidence_score: 0.9 });
    expect((await lastUpstream(t)).body).toEqual({
      kind: 'EntityRecognition', parameters: { stringIndexType: 'UnicodeCodePoint' },
      analysisInput: { documents: [{ id: '0', text: 'Satya went to Paris with 3 friends from Microsoft.', language: 'en' }] },
    });
    // Offsets count code points: the emoji with its skin tone before the address is two of them.
    const pii = await analyze(account.key, { kind: 'PiiEntityRecognition', text: `${THUMBS_MEDIUM} mail jane@example.com` });
    expect(pii.json.documents[0]).toMatchObject({ redacted_text: `${THUMBS_MEDIUM} mail ****************`, entities: [{ text: 'jane@example.com', category: 'Email', offset: 8, length: 16 }] });
    expect((await lastUpstream(t)).body.analysisInput.documents[0].language).toBe('auto');
    const phrases = await analyze(account.key, { kind: 'KeyPhraseExtraction', text: 'The quarterly revenue exceeded every forecast.' });
    expect(phrases.json.documents[0].key_phrases).toEqual(['quarterly', 'revenue', 'exceeded', 'every', 'forecast']);
    expect((await lastUpstream(t)).body.parameters).toBeUndefined();
    const detect = await analyze(account.key, { kind: 'LanguageDetection', text: 'Bonjour, je suis content.' });
    expect(detect.json.documents[0].detected_language).toEqual({ name: 'French', iso6391_name: 'fr', confidence_score: 0.9 });
    expect((await lastUpstream(t)).body.analysisInput.documents[0]).toEqual({ id: '0', text: 'Bonjour, je suis content.' });
    const sentiment = await analyze(account.key, { text: 'I love it.' });
    expect(sentiment.json).toMatchObject({ kind: 'SentimentAnalysis', documents: [{ index: 0, sentiment: 'positive', confidence_scores: { positive: 0.95 } }] });
    expect((await usageRows(t, account)).map((r) => r.quantity)).toEqual([1n, 1n, 1n, 1n, 1n]);
  });

  it('refuses bad input with a 400 naming the parameter, reserving and charging nothing', async () => {
    const account = await t.account('1');
    const cases: Array<[unknown, string, string]> = [
      [{}, 'invalid_request', 'text'],
      [{ text: '' }, 'invalid_request', 'text'],
      [{ text: [] }, 'invalid_request', 'text'],
      [{ text: 5 }, 'invalid_request', 'text'],
      [{ text: ['ok', 7] }, 'invalid_request', 'text'],
      [{ text: 'hi', kind: 'EntityLinking' }, 'invalid_request', 'kind'],
      [{ text: 'hi', language: 'english!' }, 'invalid_request', 'language'],
      [{ text: 'hi', language: 3 }, 'invalid_request', 'language'],
      [{ text: 'hi', showStats: true }, 'invalid_request', 'showStats'],
      [{ text: 'hi', kind: 'LanguageDetection', language: 'en' }, 'unsupported_parameter', 'language'],
      [{ text: Array.from({ length: 11 }, () => 'hi') }, 'invalid_request', 'text'],
      [{ text: Array.from({ length: 6 }, () => 'hi'), kind: 'EntityRecognition' }, 'invalid_request', 'text'],
      [{ text: Array.from({ length: 6 }, () => 'hi'), kind: 'PiiEntityRecognition' }, 'invalid_request', 'text'],
      [{ text: Array.from({ length: 1001 }, () => 'hi'), kind: 'LanguageDetection' }, 'invalid_request', 'text'],
    ];
    for (const [body, code, param] of cases) {
      const a = await analyze(account.key, body);
      expect(a.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(a.json.error.code, JSON.stringify(a.json)).toBe(code);
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
    }
    expect((await analyze(account.key, { text: Array.from({ length: 11 }, () => 'hi') })).json.error.message).toBe("SentimentAnalysis takes at most 10 documents per request; 'text' has 11.");
    // The limits are the vendor's: 10 sentiment documents and 1,000 for detection pass.
    expect((await analyze(account.key, { text: Array.from({ length: 10 }, () => 'hi'), model: 'content-safety-text' })).json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    await untouched(t, account);
    const batch = await analyze(account.key, { kind: 'LanguageDetection', text: Array.from({ length: 1000 }, (_, i) => `text ${i}`) });
    expect(batch.status).toBe(200);
    expect(batch.json.usage.text_records).toBe(1000);
  });

  it('reserves every document as if it succeeded and refuses what the balance cannot hold', async () => {
    const account = await t.account('0.001');
    const refused = await analyze(account.key, { text: ['one', 'two'] });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe('Insufficient balance: this request needs $0.002 reserved (2 text records at $1 per 1000); $0.001 is available. Top up.');
    await untouched(t, account, 1_000_000n);
    const fits = await analyze(account.key, { text: 'one' });
    expect(fits.status).toBe(200);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 0n, heldNano: 0n });
  });

  it('charges nothing when the vendor fails or answers garbage', async () => {
    const account = await t.account('1');
    await t.fault({ status: 503 }, 'azure-language');
    expect((await analyze(account.key, { text: 'hi' })).status).toBe(502);
    await t.clearFaults();
    await t.fault({ error_after_chunks: 1 }, 'azure-language');
    expect((await analyze(account.key, { text: 'hi' })).status).toBe(502);
    await t.clearFaults();
    await untouched(t, account);
  });

  it('lists the language offering under ?service_type=language', async () => {
    const account = await t.account('0');
    const res = await fetch(`${t.url}/v1/models?service_type=language`, { headers: { authorization: `Bearer ${account.key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(['language-standard']);
  });
});

describeStore(`language summarization (${storeKind})`, () => {
  /** Polls every 50 ms (the manifest's 500 ms, shortened for the test), with the manifest's deadline. */
  let t: TestGateway;
  /** Same, with a deadline (100 ms) that the simulator's second poll (at about 100 ms or later) misses. */
  let tight: TestGateway;
  beforeAll(async () => {
    const fast = await copyConfig();
    await fast.editYaml('providers/azure-language.yaml', (d) => { d.operations.summarize.poll.interval_ms = 50; });
    const short = await copyConfig();
    await short.editYaml('providers/azure-language.yaml', (d) => { Object.assign(d.operations.summarize.poll, { interval_ms: 60, deadline_ms: 100 }); });
    [t, tight] = await Promise.all([startTestGateway({ configFile: fast.configFile }), startTestGateway({ configFile: short.configFile })]);
  });
  afterAll(async () => { await Promise.all([t?.dispose(), tight?.dispose()]); });
  beforeEach(async () => { await t.clearFaults(); });
  const summarize = (key: string, body: unknown, gateway = t) => post(gateway, '/v1/language/summarize', key, body);

  it('polls the job until it ends (several polls) and bills each document together with its summary', async () => {
    const account = await t.account('1');
    // Three sentences of 199 elements: the document (599) alone is 1 record; with its 597-element summary, 2.
    const sentence = (c: string) => `${c.repeat(198)}.`;
    const doc = [sentence('a'), sentence('b'), sentence('c')].join(' ');
    expect(textElements(doc)).toBe(599);
    const before = t.sim.requests;
    const a = await summarize(account.key, { text: [doc], sentence_count: 3, language: 'en' });
    expect(a.status, JSON.stringify(a.json).slice(0, 300)).toBe(200);
    // One submit, then a poll answering `running` and one answering the result.
    expect(t.sim.requests - before).toBe(3);
    expect(a.json).toMatchObject({ object: 'language.summary', model: 'language-standard', mode: 'extractive', errors: [] });
    expect(a.json.documents[0].sentences.map((s: any) => s.text)).toEqual([sentence('a'), sentence('b'), sentence('c')]);
    expect(a.json.usage).toEqual({ input_elements: 599, output_elements: 597, text_records: 2 });
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.002');
    // The last upstream request was a poll of the job the submission created.
    expect((await lastUpstream(t)).path).toMatch(/^\/language\/analyze-text\/jobs\/[0-9a-f-]+$/);
    await billed(t, account, a, 2, 'language-summarize');
  });

  it('rounds each document with its summary at 999, 1,000 and 1,001 elements', async () => {
    // Extractive, one sentence: the simulator picks the sentence with the most words, the first on a tie.
    // Each document alone is one record; its summary decides whether it is two.
    const sentence = (n: number) => `${'e'.repeat(n - 1)}.`;
    const cases: Array<[string, { input_elements: number; output_elements: number; text_records: number }]> = [
      [`${sentence(498)} zz`, { input_elements: 501, output_elements: 498, text_records: 1 }], // 999
      [sentence(500), { input_elements: 500, output_elements: 500, text_records: 1 }], // 1,000
      [`${sentence(499)} zz`, { input_elements: 502, output_elements: 499, text_records: 2 }], // 1,001
    ];
    for (const [text, usage] of cases) {
      const account = await t.account('1');
      const a = await summarize(account.key, { text, sentence_count: 1 });
      expect(a.status).toBe(200);
      expect(a.json.usage).toEqual(usage);
      await billed(t, account, a, usage.text_records, 'language-summarize');
    }
  });

  it('counts grapheme clusters in documents and summaries: skin tones, ZWJ sequences, combining marks, CJK', async () => {
    const account = await t.account('1');
    const texts = [
      `${THUMBS_MEDIUM.repeat(499)}.`, // 500 elements (999 code points); summary the same: 1,000, 1 record
      `a${FAMILY.repeat(497)}. zz`, // 502 elements (3,484 code points); summary 499: 1,001, 2 records
      `${E_ACUTE.repeat(497)}. zz`, // 501 elements (998 code points); summary 498: 999, 1 record
      `${'中'.repeat(499)}.`, // 500 elements; summary the same: 1,000, 1 record
    ];
    const a = await summarize(account.key, { text: texts, sentence_count: 1 });
    expect(a.status, JSON.stringify(a.json).slice(0, 300)).toBe(200);
    expect(a.json.documents.map((d: any) => d.sentences.map((x: any) => x.text))).toEqual([[texts[0]], [texts[1]!.slice(0, -3)], [texts[2]!.slice(0, -3)], [texts[3]]]);
    // Offsets and lengths are in code points.
    expect(a.json.documents[1].sentences[0]).toMatchObject({ offset: 0, length: 1 + 7 * 497 + 1 });
    expect(a.json.usage).toEqual({ input_elements: 2003, output_elements: 1997, text_records: 5 });
    await billed(t, account, a, 5, 'language-summarize');
  });

  it('writes abstractive summaries when asked, and bills them with their documents', async () => {
    const account = await t.account('1');
    const text = 'The committee met on Tuesday. It approved funding for two new parks and delayed the library renovation.';
    const a = await summarize(account.key, { text, summary_length: 'short', language: 'en' });
    expect(a.status).toBe(200);
    expect(a.json.mode).toBe('abstractive');
    // The simulator's abstract: "Summary: " and the first 12 words.
    const summary = 'Summary: The committee met on Tuesday It approved funding for two new parks';
    expect(a.json.documents).toEqual([{ index: 0, summaries: [{ text: summary, contexts: [{ offset: 0, length: text.length }] }], warnings: [] }]);
    expect(a.json.usage).toEqual({ input_elements: text.length, output_elements: summary.length, text_records: 1 });
    const job = (await lastUpstream(t)).path;
    expect(job).toMatch(/^\/language\/analyze-text\/jobs\/[0-9a-f-]+$/);
    await billed(t, account, a, 1, 'language-summarize');
  });

  it('bills nothing for an empty document or one the upstream failed, in a batch', async () => {
    const account = await t.account('1');
    const a = await summarize(account.key, { text: ['Sales rose. Costs fell.', '', 'This document sim:fail fails.'], sort_by: 'Rank' });
    expect(a.status).toBe(200);
    expect(a.json.documents.map((d: any) => d.index)).toEqual([0]);
    expect(a.json.errors.map((e: any) => [e.index, e.code])).toEqual([[1, 'InvalidDocument'], [2, 'InvalidDocument']]);
    expect(a.json.usage).toEqual({ input_elements: 23, output_elements: 22, text_records: 1 });
    await billed(t, account, a, 1, 'language-summarize');
  });

  it('charges nothing for a failed job, a job past its deadline, or a failed submission or poll', async () => {
    const account = await t.account('1');
    const failed = await summarize(account.key, { text: ['Fine text.', 'This one sim:fail-task ends the job.'] });
    expect(failed.status).toBe(502);
    expect(failed.json.error).toMatchObject({ code: 'upstream_error', message: 'The upstream job ended with status "failed".' });
    // Both attempts of the request: the first and its one retry on the same deployment (issue 29).
    await t.fault({ status: 503, times: 2 }, 'azure-language');
    expect((await summarize(account.key, { text: 'Fine text.' })).status).toBe(502);
    // The submission succeeds (it takes the harmless first fault); the first poll fails, or answers garbage.
    await t.fault({ latency_ms: 0, times: 1 }, 'azure-language');
    await t.fault({ status: 500, times: 1 }, 'azure-language');
    const pollFailed = await summarize(account.key, { text: 'Fine text.' });
    expect(pollFailed.status).toBe(502);
    expect(pollFailed.json.error.message).toBe('Polling the upstream job failed (HTTP 500).');
    await t.fault({ latency_ms: 0, times: 1 }, 'azure-language');
    await t.fault({ error_after_chunks: 1, times: 1 }, 'azure-language');
    const garbled = await summarize(account.key, { text: 'Fine text.' });
    expect(garbled.status).toBe(502);
    expect(garbled.json.error.message).toBe('The upstream provider sent a malformed job status.');
    await t.clearFaults();
    await untouched(t, account);
    // Past the deadline: the simulator's job ends at its second poll, which the tight deadline never reaches.
    const lateAccount = await tight.account('1');
    const late = await summarize(lateAccount.key, { text: 'Fine text.' }, tight);
    expect(late.status).toBe(504);
    expect(late.json.error).toMatchObject({ code: 'upstream_timeout', message: expect.stringMatching(/^The upstream job did not finish within/) });
    await untouched(tight, lateAccount);
  });

  it('reserves twice each document\'s records (room for its summary) and refuses what the balance cannot hold', async () => {
    const account = await t.account('0.001');
    const refused = await summarize(account.key, { text: 'A short document.' });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe('Insufficient balance: this request needs $0.002 reserved (2 text records at $1 per 1000); $0.001 is available. Top up.');
    await untouched(t, account, 1_000_000n);
    const enough = await t.account('0.002');
    const a = await summarize(enough.key, { text: 'A short document.' });
    expect(a.status).toBe(200);
    expect(await t.settled(enough.id)).toMatchObject({ balanceNano: 1_000_000n, heldNano: 0n, openHolds: 0 });
  });

  it('refuses bad input with a 400 naming the parameter, reserving and charging nothing', async () => {
    const account = await t.account('1');
    const before = t.sim.requests;
    const cases: Array<[unknown, string, string]> = [
      [{}, 'invalid_request', 'text'],
      [{ text: '' }, 'invalid_request', 'text'],
      [{ text: [] }, 'invalid_request', 'text'],
      [{ text: Array.from({ length: 26 }, () => 'Hi.') }, 'invalid_request', 'text'],
      [{ text: ['a'.repeat(62_501), 'b'.repeat(62_500)] }, 'invalid_request', 'text'],
      [{ text: { doc: 'hi' } }, 'invalid_request', 'text'],
      [{ text: 'hi', sentence_count: 0 }, 'invalid_request', 'sentence_count'],
      [{ text: 'hi', sentence_count: 21 }, 'invalid_request', 'sentence_count'],
      [{ text: 'hi', sentence_count: 2.5 }, 'invalid_request', 'sentence_count'],
      [{ text: 'hi', sentence_count: '3' }, 'invalid_request', 'sentence_count'],
      [{ text: 'hi', sort_by: 'Date' }, 'invalid_request', 'sort_by'],
      [{ text: 'hi', mode: 'bullets' }, 'invalid_request', 'mode'],
      [{ text: 'hi', summary_length: 'tiny' }, 'invalid_request', 'summary_length'],
      [{ text: 'hi', language: 'english' }, 'invalid_request', 'language'],
      [{ text: 'hi', kind: 'ExtractiveSummarization' }, 'invalid_request', 'kind'],
      [{ text: 'hi', mode: 'extractive', summary_length: 'short' }, 'unsupported_parameter', 'summary_length'],
      [{ text: 'hi', mode: 'abstractive', sentence_count: 3 }, 'unsupported_parameter', 'sentence_count'],
      [{ text: 'hi', mode: 'abstractive', sort_by: 'Rank' }, 'unsupported_parameter', 'sort_by'],
      [{ text: 'hi', summary_length: 'long', sort_by: 'Offset' }, 'unsupported_parameter', 'sort_by'],
    ];
    for (const [body, code, param] of cases) {
      const a = await summarize(account.key, body);
      expect(a.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(a.json.error.code, JSON.stringify(a.json)).toBe(code);
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
    }
    expect((await summarize(account.key, { text: ['a'.repeat(62_501), 'b'.repeat(62_500)] })).json.error.message)
      .toBe("A summarization request takes at most 125000 text elements in all; 'text' has 125001.");
    expect((await summarize(account.key, { text: 'hi', mode: 'extractive', summary_length: 'short' })).json.error.message)
      .toBe("'summary_length' applies to abstractive summaries; this request asks for extractive ones (mode: extractive).");
    // Nothing reached the vendor.
    expect(t.sim.requests).toBe(before);
    await untouched(t, account);
    // The limits themselves pass: 25 documents, 20 sentences, 125,000 elements.
    const edge = await summarize(account.key, { text: Array.from({ length: 25 }, (_, i) => `Document ${i}.`), sentence_count: 20 });
    expect(edge.status).toBe(200);
    expect(edge.json.usage.text_records).toBe(25);
    const heavy = await summarize(account.key, { text: ['a'.repeat(62_500), 'b'.repeat(62_500)] });
    expect(heavy.status, JSON.stringify(heavy.json).slice(0, 300)).toBe(200);
  });
});
