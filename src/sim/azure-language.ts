/**
 * Azure AI Language (analyze-text) in the simulator (docs/vendors/native-ops.md, spec
 * `shared/specs/azure/language/analyzetext-2026-05-01.json`, api-version 2026-05-01):
 *
 * - `POST /language/:analyze-text?api-version=2026-05-01[&showStats=true]`: one task of kind
 *   SentimentAnalysis, EntityRecognition, KeyPhraseExtraction, PiiEntityRecognition or LanguageDetection
 *   over `analysisInput.documents`, answered at once as `{kind: "<Kind>Results", results: {documents,
 *   errors, modelVersion, statistics?}}`.
 * - `POST /language/analyze-text/jobs?api-version=2026-05-01`: a job of summarization tasks
 *   (ExtractiveSummarization, AbstractiveSummarization; the four LRO kinds above work too), answered
 *   202 with an empty body and an absolute `operation-location` header; then
 *   `GET /language/analyze-text/jobs/{jobId}?api-version=2026-05-01[&showStats=true]` answers `running`
 *   on the first poll and the final state from the second (`JOB_POLLS_UNTIL_DONE`).
 *
 * Billing: the service reports text records only as statistics (with `showStats=true`):
 * `documents[i].statistics {charactersCount (text elements), transactionsCount}` and the request's
 * `statistics.transactionsCount`. The simulator counts text elements as extended grapheme clusters
 * (`Intl.Segmenter`), a transaction being 1,000 of them per document, rounded up; for summarization a
 * document's transactions count its input and its summary together (spec 4.10's rule).
 *
 * Deterministic failures: an empty (or blank) document, or one over the synchronous limit of 5,120
 * text elements, gets a per-document error (`results.errors`); so does a document containing `sim:fail`.
 * A job document containing `sim:fail-task` makes the job's last task fail: the job ends `failed`
 * (one task) or `partiallyCompleted` (several).
 */
import { textElements } from '../meters/counters/text-elements.js';
import type { Exchange, SimRoute } from './exchange.js';
import { azureFaultResponse, checkApiVersion, invalidJson, sendAzureError, type SimMatch } from './azure-content-safety.js';
import { isPositiveInt, sendJsonAnswer, seededUuid, unknownKey } from './native.js';
import { isRecord, type Rec } from './text.js';

export const LANGUAGE_API_VERSION = '2026-05-01';
export const ANALYZE_TEXT_PATH = '/language/:analyze-text';
export const JOBS_PATH = '/language/analyze-text/jobs';
const JOB_PATH = /^\/language\/analyze-text\/jobs\/([^/:]+)$/;
/** The poll that first answers the final state (earlier polls answer `running`). */
export const JOB_POLLS_UNTIL_DONE = 2;
export const MODEL_VERSION = '2025-11-01';
/** Text elements per text record (transaction). */
export const TEXT_RECORD_ELEMENTS = 1000;
/** Synchronous limits (Microsoft's data-limits page, not the spec): text elements per document, documents per request by kind. */
export const SYNC_MAX_DOCUMENT_ELEMENTS = 5120;
export const SYNC_MAX_DOCUMENTS = {
  SentimentAnalysis: 10, EntityRecognition: 5, KeyPhraseExtraction: 10, PiiEntityRecognition: 5, LanguageDetection: 1000,
} as const;
/** Asynchronous limits: documents per job and text elements across all of them. */
export const JOB_MAX_DOCUMENTS = 25;
export const JOB_MAX_ELEMENTS = 125_000;
/** Extractive `sentenceCount` range (Microsoft's docs; the spec gives none) and its default. */
export const SENTENCE_COUNT_RANGE = [1, 20] as const;
export const DEFAULT_SENTENCE_COUNT = 3;
/** Words of an abstractive summary by `summaryLength` (medium when absent); `sentenceCount` n gives 12 x n. */
export const SUMMARY_WORDS = { short: 12, medium: 24, long: 48 } as const;
export const FAIL_DOCUMENT_MARKER = 'sim:fail';
export const FAIL_TASK_MARKER = 'sim:fail-task';
const MAX_JOBS = 1000;

export type SyncKind = keyof typeof SYNC_MAX_DOCUMENTS;
const SYNC_KINDS = Object.keys(SYNC_MAX_DOCUMENTS) as SyncKind[];
type LroKind = Exclude<SyncKind, 'LanguageDetection'> | 'ExtractiveSummarization' | 'AbstractiveSummarization';
const LRO_KINDS: LroKind[] = ['SentimentAnalysis', 'EntityRecognition', 'KeyPhraseExtraction', 'PiiEntityRecognition', 'ExtractiveSummarization', 'AbstractiveSummarization'];
const INDEX_TYPES = ['TextElements_v8', 'UnicodeCodePoint', 'Utf16CodeUnit'] as const;
type IndexType = (typeof INDEX_TYPES)[number];

/** Task parameters the spec defines, by kind (the simulator rejects others). */
const PARAMETERS: Record<LroKind | SyncKind, readonly string[]> = {
  SentimentAnalysis: ['loggingOptOut', 'modelVersion', 'opinionMining', 'stringIndexType'],
  EntityRecognition: ['loggingOptOut', 'modelVersion', 'stringIndexType', 'inclusionList', 'exclusionList', 'overlapPolicy', 'inferenceOptions'],
  KeyPhraseExtraction: ['loggingOptOut', 'modelVersion'],
  PiiEntityRecognition: ['loggingOptOut', 'modelVersion', 'domain', 'piiCategories', 'stringIndexType', 'excludePiiCategories', 'valueExclusionPolicy', 'entitySynonyms', 'redactionPolicies', 'confidenceScoreThreshold', 'disableEntityValidation'],
  LanguageDetection: ['loggingOptOut', 'modelVersion'],
  ExtractiveSummarization: ['loggingOptOut', 'modelVersion', 'sentenceCount', 'sortBy', 'stringIndexType'],
  AbstractiveSummarization: ['loggingOptOut', 'modelVersion', 'sentenceCount', 'stringIndexType', 'summaryLength'],
};

// ---------------------------------------------------------------------------------------------------
// Text helpers

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** Unicode text elements (extended grapheme clusters), the unit of Azure's `charactersCount`: the gateway's own counter. */
export { textElements };

/** Text records of `elements` text elements: blocks of 1,000, rounded up. */
export const textRecords = (elements: number): number => Math.ceil(elements / TEXT_RECORD_ELEMENTS);

/** Maps a UTF-16 index of `text` to an offset in the requested `stringIndexType`. */
function indexer(text: string, type: IndexType): (utf16: number) => number {
  if (type === 'Utf16CodeUnit') return (i) => i;
  if (type === 'UnicodeCodePoint') return (i) => Array.from(text.slice(0, i)).length;
  const starts = Array.from(graphemes.segment(text), (s) => s.index);
  return (i) => {
    let lo = 0;
    let hi = starts.length; // count of starts < i
    while (lo < hi) { const mid = (lo + hi) >> 1; if (starts[mid]! < i) lo = mid + 1; else hi = mid; }
    return lo;
  };
}

interface Span { text: string; start: number; end: number }

/** Sentences: from a non-space character through the next run of `.`, `!` or `?` (or the end). */
export function sentences(text: string): Span[] {
  return Array.from(text.matchAll(/\S[^.!?]*(?:[.!?]+|$)/gu), (m) => {
    const t = m[0].trimEnd();
    return { text: t, start: m.index, end: m.index + t.length };
  });
}

const wordsOf = (text: string): Span[] => Array.from(text.matchAll(/[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N}'-]*/gu), (m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));

/** Language detection by script, then by a few frequent words; English otherwise. `translator` is the Translator code. */
export function detectLanguage(text: string): { name: string; iso6391Name: string; confidenceScore: number; translator: string } {
  const script: Array<[RegExp, string, string, string]> = [
    [/[\p{Script=Hiragana}\p{Script=Katakana}]/u, 'Japanese', 'ja', 'ja'],
    [/\p{Script=Hangul}/u, 'Korean', 'ko', 'ko'],
    [/\p{Script=Han}/u, 'Chinese_Simplified', 'zh_chs', 'zh-Hans'],
    [/\p{Script=Cyrillic}/u, 'Russian', 'ru', 'ru'],
    [/\p{Script=Arabic}/u, 'Arabic', 'ar', 'ar'],
    [/\p{Script=Greek}/u, 'Greek', 'el', 'el'],
  ];
  for (const [re, name, iso, translator] of script) if (re.test(text)) return { name, iso6391Name: iso, confidenceScore: 1, translator };
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const markers: Array<[string, string, Set<string>]> = [
    ['French', 'fr', new Set(['le', 'la', 'les', 'est', 'et', 'je', 'vous', 'bonjour', 'merci', 'une', 'des'])],
    ['Spanish', 'es', new Set(['el', 'los', 'las', 'es', 'y', 'hola', 'gracias', 'que', 'una', 'por'])],
    ['German', 'de', new Set(['der', 'die', 'das', 'und', 'ist', 'ich', 'nicht', 'hallo', 'danke', 'ein', 'eine'])],
  ];
  let best: { name: string; iso6391Name: string; hits: number } = { name: 'English', iso6391Name: 'en', hits: 0 };
  for (const [name, iso, set] of markers) {
    const hits = words.filter((w) => set.has(w)).length;
    if (hits > best.hits) best = { name, iso6391Name: iso, hits };
  }
  return { name: best.name, iso6391Name: best.iso6391Name, confidenceScore: best.hits > 0 ? 0.9 : 0.8, translator: best.iso6391Name };
}

// ---------------------------------------------------------------------------------------------------
// Per-document analysis

interface Doc { id: string; text: string; language?: string; countryHint?: string }
interface DocOutcome { id: string; ok: boolean; result?: Rec; error?: Rec; elements: number; outputElements: number }
interface TaskOptions { indexType: IndexType; params: Rec }

const docError = (id: string, message: string, innerCode = 'InvalidDocument') => ({
  id, error: { code: 'InvalidArgument', message: 'Invalid document in request.', innererror: { code: innerCode, message } },
});

const POSITIVE = /\b(good|great|love|loved|excellent|happy|wonderful|nice|amazing|best)\b/giu;
const NEGATIVE = /\b(bad|terrible|hate|hated|awful|sad|worst|poor|horrible|angry)\b/giu;
const SCORES = {
  positive: { positive: 0.95, neutral: 0.04, negative: 0.01 },
  neutral: { positive: 0.05, neutral: 0.9, negative: 0.05 },
  negative: { positive: 0.01, neutral: 0.04, negative: 0.95 },
} as const;
const round2 = (v: number) => Math.round(v * 100) / 100;

function sentiment(doc: Doc, o: TaskOptions): Rec {
  const at = indexer(doc.text, o.indexType);
  const sents = sentences(doc.text).map((s) => {
    const pos = s.text.match(POSITIVE)?.length ?? 0;
    const neg = s.text.match(NEGATIVE)?.length ?? 0;
    const value = pos > neg ? 'positive' : neg > pos ? 'negative' : 'neutral';
    return { text: s.text, sentiment: value, confidenceScores: { ...SCORES[value] }, offset: at(s.start), length: at(s.end) - at(s.start) };
  });
  const has = (v: string) => sents.some((s) => s.sentiment === v);
  const overall = has('positive') && has('negative') ? 'mixed' : has('positive') ? 'positive' : has('negative') ? 'negative' : 'neutral';
  const mean = (k: 'positive' | 'neutral' | 'negative') => round2(sents.reduce((s, x) => s + x.confidenceScores[k], 0) / Math.max(1, sents.length));
  return { id: doc.id, sentiment: overall, confidenceScores: { positive: mean('positive'), neutral: mean('neutral'), negative: mean('negative') }, sentences: sents, warnings: [] };
}

const LOCATIONS = new Set(['paris', 'london', 'seattle', 'berlin', 'tokyo', 'madrid', 'rome', 'france', 'germany', 'japan', 'spain', 'italy', 'europe', 'redmond']);
const ORGANIZATIONS = new Set(['microsoft', 'contoso', 'google', 'apple', 'cohere', 'azure', 'openai', 'anthropic', 'fabrikam']);
const NOT_ENTITIES = new Set(['the', 'a', 'an', 'i', 'this', 'that', 'it', 'we', 'they', 'he', 'she', 'you', 'my', 'our', 'in', 'on', 'at', 'and', 'but', 'if', 'there']);

function entities(doc: Doc, o: TaskOptions): Rec {
  const at = indexer(doc.text, o.indexType);
  type Found = { w: Span; category: string; subcategory?: string; confidenceScore: number };
  const found = wordsOf(doc.text).flatMap((w): Found[] => {
    if (/^\p{N}/u.test(w.text)) return [{ w, category: 'Quantity', subcategory: 'Number', confidenceScore: 0.8 }];
    if (!/^\p{Lu}/u.test(w.text) || NOT_ENTITIES.has(w.text.toLowerCase())) return [];
    const lower = w.text.toLowerCase();
    const category = LOCATIONS.has(lower) ? 'Location' : ORGANIZATIONS.has(lower) ? 'Organization' : 'Person';
    return [{ w, category, confidenceScore: 0.9 }];
  });
  return {
    id: doc.id, warnings: [],
    entities: found.map(({ w, category, subcategory, confidenceScore }) => ({
      text: w.text, category, ...(subcategory ? { subcategory } : {}), offset: at(w.start), length: at(w.end) - at(w.start), confidenceScore,
    })),
  };
}

const STOPWORDS = new Set(['about', 'after', 'again', 'their', 'there', 'these', 'those', 'which', 'while', 'would', 'could', 'should', 'where', 'other', 'because', 'before']);

function keyPhrases(doc: Doc): Rec {
  const seen = new Set<string>();
  const phrases: string[] = [];
  for (const w of wordsOf(doc.text)) {
    const lower = w.text.toLowerCase();
    if (Array.from(w.text).length < 5 || STOPWORDS.has(lower) || seen.has(lower) || /^\p{N}/u.test(w.text)) continue;
    seen.add(lower);
    phrases.push(w.text);
    if (phrases.length === 10) break;
  }
  return { id: doc.id, keyPhrases: phrases, warnings: [] };
}

const PII_PATTERNS: Array<[string, RegExp]> = [
  ['Email', /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu],
  ['PhoneNumber', /\+?\d[\d ()-]{6,}\d/gu],
];

function pii(doc: Doc, o: TaskOptions): Rec {
  const at = indexer(doc.text, o.indexType);
  const wanted = Array.isArray(o.params.piiCategories) && !o.params.piiCategories.includes('All') ? new Set(o.params.piiCategories as string[]) : null;
  const found: Array<Span & { category: string }> = [];
  for (const [category, re] of PII_PATTERNS) {
    if (wanted && !wanted.has(category)) continue;
    for (const m of doc.text.matchAll(re)) {
      if (!found.some((f) => m.index < f.end && f.start < m.index + m[0].length)) found.push({ text: m[0], start: m.index, end: m.index + m[0].length, category });
    }
  }
  found.sort((a, b) => a.start - b.start);
  let redacted = '';
  let last = 0;
  for (const f of found) { redacted += doc.text.slice(last, f.start) + '*'.repeat(Array.from(f.text).length); last = f.end; }
  redacted += doc.text.slice(last);
  return {
    id: doc.id, redactedText: redacted, warnings: [],
    entities: found.map((f) => ({ text: f.text, category: f.category, offset: at(f.start), length: at(f.end) - at(f.start), confidenceScore: 0.8 })),
  };
}

function languageDetection(doc: Doc): Rec {
  const { name, iso6391Name, confidenceScore } = detectLanguage(doc.text);
  return { id: doc.id, detectedLanguage: { name, iso6391Name, confidenceScore }, warnings: [] };
}

/** Extractive summary: the `sentenceCount` longest sentences (ties by position), ordered by offset or by rank. */
function extractive(doc: Doc, o: TaskOptions): { result: Rec; outputElements: number } {
  const at = indexer(doc.text, o.indexType);
  const sents = sentences(doc.text);
  const lengths = sents.map((s) => wordsOf(s.text).length);
  const longest = Math.max(1, ...lengths);
  const ranked = sents.map((s, i) => ({ s, i, rankScore: round2(lengths[i]! / longest) }))
    .sort((a, b) => b.rankScore - a.rankScore || a.i - b.i)
    .slice(0, (o.params.sentenceCount as number | undefined) ?? DEFAULT_SENTENCE_COUNT);
  if (o.params.sortBy !== 'Rank') ranked.sort((a, b) => a.i - b.i);
  const out = ranked.map(({ s, rankScore }) => ({ text: s.text, rankScore, offset: at(s.start), length: at(s.end) - at(s.start) }));
  return { result: { id: doc.id, sentences: out, warnings: [] }, outputElements: out.reduce((n, s) => n + textElements(s.text), 0) };
}

/** Abstractive summary: "Summary: " and the document's first N words (N from summaryLength or sentenceCount). */
function abstractive(doc: Doc, o: TaskOptions): { result: Rec; outputElements: number } {
  const at = indexer(doc.text, o.indexType);
  const length = o.params.summaryLength as keyof typeof SUMMARY_WORDS | undefined;
  const count = typeof o.params.sentenceCount === 'number' && length === undefined ? 12 * o.params.sentenceCount : SUMMARY_WORDS[length ?? 'medium'];
  const text = `Summary: ${wordsOf(doc.text).slice(0, count).map((w) => w.text).join(' ')}`;
  return {
    result: { id: doc.id, summaries: [{ text, contexts: [{ offset: 0, length: at(doc.text.length) }] }], warnings: [] },
    outputElements: textElements(text),
  };
}

/** Runs one task kind on one document: its result and summary size, or its per-document error. */
function runDoc(kind: LroKind | SyncKind, doc: Doc, o: TaskOptions, sync: boolean): DocOutcome {
  const elements = textElements(doc.text);
  const failed = (error: Rec): DocOutcome => ({ id: doc.id, ok: false, error, elements, outputElements: 0 });
  if (doc.text.trim() === '') return failed(docError(doc.id, 'Document text is empty.'));
  if (sync && elements > SYNC_MAX_DOCUMENT_ELEMENTS) {
    return failed(docError(doc.id, `A document within the request was too large to be processed. Limit document size to: ${SYNC_MAX_DOCUMENT_ELEMENTS} text elements. For additional details on the data limitations see https://aka.ms/text-analytics-data-limits`));
  }
  if (doc.text.includes(FAIL_DOCUMENT_MARKER) && !doc.text.includes(FAIL_TASK_MARKER)) return failed(docError(doc.id, `The document could not be processed (simulated: it contains ${FAIL_DOCUMENT_MARKER}).`));
  const plain = (result: Rec): DocOutcome => ({ id: doc.id, ok: true, result, elements, outputElements: 0 });
  switch (kind) {
    case 'SentimentAnalysis': return plain(sentiment(doc, o));
    case 'EntityRecognition': return plain(entities(doc, o));
    case 'KeyPhraseExtraction': return plain(keyPhrases(doc));
    case 'PiiEntityRecognition': return plain(pii(doc, o));
    case 'LanguageDetection': return plain(languageDetection(doc));
    case 'ExtractiveSummarization': { const r = extractive(doc, o); return { id: doc.id, ok: true, result: r.result, elements, outputElements: r.outputElements }; }
    case 'AbstractiveSummarization': { const r = abstractive(doc, o); return { id: doc.id, ok: true, result: r.result, elements, outputElements: r.outputElements }; }
  }
}

/** Transactions (text records) of a processed document: its input and any generated summary together. */
const docTransactions = (d: DocOutcome): number => textRecords(d.elements + d.outputElements);

/** The `results` object of a task: documents, errors, modelVersion and, when asked, statistics. */
function taskResults(outcomes: DocOutcome[], showStats: boolean): Rec {
  const documents = outcomes.filter((d) => d.ok).map((d) => ({
    ...d.result, ...(showStats ? { statistics: { charactersCount: d.elements, transactionsCount: docTransactions(d) } } : {}),
  }));
  const results: Rec = { documents, errors: outcomes.filter((d) => !d.ok).map((d) => d.error), modelVersion: MODEL_VERSION };
  if (showStats) results.statistics = requestStatistics(outcomes);
  return results;
}

function requestStatistics(outcomes: DocOutcome[]): Rec {
  const valid = outcomes.filter((d) => d.ok);
  return {
    documentsCount: outcomes.length, validDocumentsCount: valid.length, erroneousDocumentsCount: outcomes.length - valid.length,
    transactionsCount: valid.reduce((n, d) => n + docTransactions(d), 0),
  };
}

// ---------------------------------------------------------------------------------------------------
// Request validation

interface Failure { ok: false; status: number; code: string; message: string; inner?: { code: string; message: string } }
type Checked<T> = { ok: true; value: T } | Failure;
const invalid = (message: string, innerCode = 'InvalidParameterValue'): Failure => ({ ok: false, status: 400, code: 'InvalidRequest', message: 'Invalid Request.', inner: { code: innerCode, message } });

/** `analysisInput.documents`: MultiLanguageInput (id, text, language) or, for LanguageDetection, LanguageInput (id, text, countryHint). */
function parseDocuments(input: unknown, detection: boolean, maxDocs: number): Checked<Doc[]> {
  if (!isRecord(input)) return invalid("'analysisInput' must be an object with 'documents'.", 'MissingInputDocuments');
  const extra = unknownKey(input, ['documents']);
  if (extra !== undefined) return invalid(`Unknown field 'analysisInput.${extra}'.`);
  const docs = input.documents;
  if (!Array.isArray(docs) || docs.length === 0) return invalid('Missing input documents.', 'MissingInputDocuments');
  if (docs.length > maxDocs) return invalid(`Batch request contains too many records. Max ${maxDocs} records are permitted.`, 'InvalidDocumentBatch');
  const fields = detection ? ['id', 'text', 'countryHint'] : ['id', 'text', 'language'];
  const out: Doc[] = [];
  for (const [i, d] of docs.entries()) {
    if (!isRecord(d)) return invalid(`Document ${i} must be an object.`, 'InvalidDocument');
    const extraField = unknownKey(d, fields);
    if (extraField !== undefined) return invalid(`Unknown field '${extraField}' in document ${i} (the spec defines ${fields.join(', ')}).`, 'InvalidDocument');
    if (typeof d.id !== 'string' || d.id === '') return invalid(`Document ${i} needs a non-empty string 'id'.`, 'InvalidDocument');
    if (typeof d.text !== 'string') return invalid(`Document '${d.id}' needs a string 'text'.`, 'InvalidDocument');
    for (const k of ['language', 'countryHint']) if (d[k] !== undefined && typeof d[k] !== 'string') return invalid(`'${k}' of document '${d.id}' must be a string.`, 'InvalidDocument');
    out.push(d as unknown as Doc);
  }
  if (new Set(out.map((d) => d.id)).size !== out.length) return invalid('Request contains duplicated Ids. Make sure each document has a unique Id.', 'InvalidDocument');
  return { ok: true, value: out };
}

/** A task's `parameters` checked against the spec's fields for its kind and the documented ranges. */
function parseParameters(kind: LroKind | SyncKind, raw: unknown): Checked<TaskOptions> {
  const params = raw ?? {};
  if (!isRecord(params)) return invalid("'parameters' must be an object.");
  const extra = unknownKey(params, PARAMETERS[kind]);
  if (extra !== undefined) return invalid(`Unknown parameter '${extra}' for ${kind} (the spec defines ${PARAMETERS[kind].join(', ')}).`);
  if (params.loggingOptOut !== undefined && typeof params.loggingOptOut !== 'boolean') return invalid("'loggingOptOut' must be a boolean.");
  if (params.modelVersion !== undefined && typeof params.modelVersion !== 'string') return invalid("'modelVersion' must be a string.");
  if (params.opinionMining !== undefined && typeof params.opinionMining !== 'boolean') return invalid("'opinionMining' must be a boolean.");
  const indexType = params.stringIndexType ?? 'TextElements_v8';
  if (!(INDEX_TYPES as readonly unknown[]).includes(indexType)) return invalid(`'stringIndexType' must be one of ${INDEX_TYPES.join(', ')}.`);
  if (params.sentenceCount !== undefined) {
    const [lo, hi] = SENTENCE_COUNT_RANGE;
    if (!isPositiveInt(params.sentenceCount) || params.sentenceCount < lo || params.sentenceCount > hi) return invalid(`'sentenceCount' must be an integer from ${lo} to ${hi}.`);
  }
  if (params.sortBy !== undefined && params.sortBy !== 'Offset' && params.sortBy !== 'Rank') return invalid("'sortBy' must be Offset or Rank.");
  if (params.summaryLength !== undefined && !Object.keys(SUMMARY_WORDS).includes(params.summaryLength as string)) return invalid("'summaryLength' must be short, medium or long.");
  if (params.domain !== undefined && params.domain !== 'phi' && params.domain !== 'none') return invalid("'domain' must be phi or none.");
  for (const k of ['piiCategories', 'excludePiiCategories', 'inclusionList', 'exclusionList', 'entitySynonyms', 'redactionPolicies']) {
    if (params[k] !== undefined && !Array.isArray(params[k])) return invalid(`'${k}' must be an array.`);
  }
  return { ok: true, value: { indexType: indexType as IndexType, params } };
}

const rejected = (x: Exchange, c: Failure) => sendAzureError(x, c.status, c.code, c.message, c.inner);

// ---------------------------------------------------------------------------------------------------
// POST /language/:analyze-text

async function analyzeText(x: Exchange, url: URL): Promise<void> {
  if (!x.parsed) return invalidJson(x);
  const body = x.body;
  if (!isRecord(body)) return rejected(x, invalid('The request body must be a JSON object.', 'InvalidRequestBodyFormat'));
  const kind = body.kind;
  if (!(SYNC_KINDS as unknown[]).includes(kind)) {
    return rejected(x, invalid(`'kind' must be one of ${SYNC_KINDS.join(', ')}${kind === 'EntityLinking' ? ' (EntityLinking is not simulated)' : ''}.`, 'InvalidRequestBodyFormat'));
  }
  const k = kind as SyncKind;
  const extra = unknownKey(body, ['kind', 'analysisInput', 'parameters']);
  if (extra !== undefined) return rejected(x, invalid(`Unknown field '${extra}'.`, 'InvalidRequestBodyFormat'));
  const docs = parseDocuments(body.analysisInput, k === 'LanguageDetection', SYNC_MAX_DOCUMENTS[k]);
  if (!docs.ok) return rejected(x, docs);
  const options = parseParameters(k, body.parameters);
  if (!options.ok) return rejected(x, options);
  const showStats = url.searchParams.get('showStats') === 'true' && x.fault.omit_usage !== true;
  const outcomes = docs.value.map((d) => runDoc(k, d, options.value, true));
  await sendJsonAnswer(x, { kind: `${k}Results`, results: taskResults(outcomes, showStats) });
}

// ---------------------------------------------------------------------------------------------------
// Jobs

interface JobTask { kind: LroKind; taskName?: string; failed: boolean; outcomes: DocOutcome[] }
interface Job {
  id: string;
  displayName?: string;
  created: Date;
  polls: number;
  omitUsage: boolean;
  tasks: JobTask[];
}

/** Validates a job body (AnalyzeTextJobsInput) into its tasks and documents. */
function parseJob(body: unknown): Checked<{ displayName?: string; docs: Doc[]; tasks: Array<{ kind: LroKind; taskName?: string; options: TaskOptions }> }> {
  if (!isRecord(body)) return invalid('The request body must be a JSON object.', 'InvalidRequestBodyFormat');
  const extra = unknownKey(body, ['displayName', 'analysisInput', 'tasks']);
  if (extra !== undefined) return invalid(`Unknown field '${extra}'.`, 'InvalidRequestBodyFormat');
  if (body.displayName !== undefined && typeof body.displayName !== 'string') return invalid("'displayName' must be a string.");
  const docs = parseDocuments(body.analysisInput, false, JOB_MAX_DOCUMENTS);
  if (!docs.ok) return docs;
  const total = docs.value.reduce((n, d) => n + textElements(d.text), 0);
  if (total > JOB_MAX_ELEMENTS) return invalid(`Request Payload sent is too large to be processed. Limit request size to: ${JOB_MAX_ELEMENTS} text elements (got ${total}).`, 'InvalidDocumentBatch');
  if (!Array.isArray(body.tasks) || body.tasks.length === 0) return invalid("'tasks' must be a non-empty array.", 'InvalidRequestBodyFormat');
  const tasks: Array<{ kind: LroKind; taskName?: string; options: TaskOptions }> = [];
  for (const [i, t] of body.tasks.entries()) {
    if (!isRecord(t)) return invalid(`Task ${i} must be an object.`, 'InvalidRequestBodyFormat');
    if (!(LRO_KINDS as unknown[]).includes(t.kind)) return invalid(`Task ${i}: 'kind' must be one of ${LRO_KINDS.join(', ')} (other kinds are not simulated).`, 'InvalidRequestBodyFormat');
    const taskExtra = unknownKey(t, ['kind', 'taskName', 'parameters']);
    if (taskExtra !== undefined) return invalid(`Task ${i}: unknown field '${taskExtra}'.`, 'InvalidRequestBodyFormat');
    if (t.taskName !== undefined && typeof t.taskName !== 'string') return invalid(`Task ${i}: 'taskName' must be a string.`);
    const options = parseParameters(t.kind as LroKind, t.parameters);
    if (!options.ok) return options;
    tasks.push({ kind: t.kind as LroKind, ...(typeof t.taskName === 'string' ? { taskName: t.taskName } : {}), options: options.value });
  }
  return { ok: true, value: { ...(typeof body.displayName === 'string' ? { displayName: body.displayName } : {}), docs: docs.value, tasks } };
}

/** The job state (AnalyzeTextJobState) as a poll sees it. */
function jobState(job: Job, showStats: boolean): Rec {
  const done = job.polls >= JOB_POLLS_UNTIL_DONE;
  const now = new Date(job.created.getTime() + 1000 * job.polls).toISOString();
  const failed = job.tasks.filter((t) => t.failed).length;
  const status = !done ? 'running' : failed === 0 ? 'succeeded' : failed === job.tasks.length ? 'failed' : 'partiallyCompleted';
  const stats = showStats && !job.omitUsage;
  const state: Rec = {
    jobId: job.id,
    ...(job.displayName !== undefined ? { displayName: job.displayName } : {}),
    createdDateTime: job.created.toISOString(),
    expirationDateTime: new Date(job.created.getTime() + 24 * 3600 * 1000).toISOString(),
    lastUpdatedDateTime: now,
    status,
    errors: done ? job.tasks.filter((t) => t.failed).map((t) => ({ code: 'InternalServerError', message: `Task ${t.taskName ?? t.kind} failed (simulated: a document contains ${FAIL_TASK_MARKER}).` })) : [],
    tasks: done
      ? {
        completed: job.tasks.length - failed, failed, inProgress: 0, total: job.tasks.length,
        items: job.tasks.map((t) => ({
          kind: `${t.kind}LROResults`, ...(t.taskName !== undefined ? { taskName: t.taskName } : {}), lastUpdateDateTime: now,
          status: t.failed ? 'failed' : 'succeeded', ...(t.failed ? {} : { results: taskResults(t.outcomes, stats) }),
        })),
      }
      : { completed: 0, failed: 0, inProgress: job.tasks.length, total: job.tasks.length },
  };
  if (done && stats) {
    const valid = job.tasks.filter((t) => !t.failed);
    const docs = job.tasks[0]?.outcomes ?? [];
    state.statistics = {
      documentsCount: docs.length,
      validDocumentsCount: docs.filter((d) => d.ok).length,
      erroneousDocumentsCount: docs.filter((d) => !d.ok).length,
      transactionsCount: valid.reduce((n, t) => n + (requestStatistics(t.outcomes).transactionsCount as number), 0),
    };
  }
  return state;
}

/** The Language routes of one simulator, sharing its job table (cleared by `reset`). */
export function createLanguageRoutes(): { match(method: string, url: URL): SimMatch | undefined; reset(): void; readonly jobs: number } {
  const jobs = new Map<string, Job>();
  let sequence = 0;

  const submit = async (x: Exchange, url: URL) => {
    if (!x.parsed) return invalidJson(x);
    const parsed = parseJob(x.body);
    if (!parsed.ok) return rejected(x, parsed);
    const { displayName, docs, tasks } = parsed.value;
    const failTask = docs.some((d) => d.text.includes(FAIL_TASK_MARKER));
    sequence += 1;
    const job: Job = {
      id: seededUuid(`job:${sequence}:${x.raw}`),
      ...(displayName !== undefined ? { displayName } : {}),
      created: new Date(), polls: 0, omitUsage: x.fault.omit_usage === true,
      tasks: tasks.map((t, i) => ({
        kind: t.kind, ...(t.taskName !== undefined ? { taskName: t.taskName } : {}),
        failed: failTask && i === tasks.length - 1,
        outcomes: docs.map((d) => runDoc(t.kind, d, t.options, false)),
      })),
    };
    if (jobs.size >= MAX_JOBS) jobs.delete(jobs.keys().next().value!);
    jobs.set(job.id, job);
    const host = x.headers.host ?? '127.0.0.1';
    x.sendJson(202, undefined, { 'operation-location': `http://${host}${JOBS_PATH}/${job.id}?api-version=${url.searchParams.get('api-version')}` });
  };

  const poll = async (x: Exchange, url: URL, id: string) => {
    const job = jobs.get(id);
    if (!job) return sendAzureError(x, 404, 'NotFound', `The job ${id} was not found.`);
    job.polls += 1;
    if (x.fault.omit_usage === true) job.omitUsage = true;
    await sendJsonAnswer(x, jobState(job, url.searchParams.get('showStats') === 'true'));
  };

  const route = (handle: (x: Exchange) => Promise<void>, url: URL): SimRoute => ({
    faultResponse: azureFaultResponse,
    async handle(x) {
      if (!checkApiVersion(x, url, LANGUAGE_API_VERSION)) return;
      await handle(x);
    },
  });

  return {
    match(method, url) {
      const p = url.pathname;
      if (method === 'POST' && p === ANALYZE_TEXT_PATH) return { faultKey: 'azure-language', route: route((x) => analyzeText(x, url), url) };
      if (method === 'POST' && p === JOBS_PATH) return { faultKey: 'azure-language', route: route((x) => submit(x, url), url) };
      const id = method === 'GET' ? JOB_PATH.exec(p)?.[1] : undefined;
      if (id !== undefined) return { faultKey: 'azure-language', route: route((x) => poll(x, url, decodeURIComponent(id)), url) };
      return undefined;
    },
    reset() { jobs.clear(); sequence = 0; },
    get jobs() { return jobs.size; },
  };
}
