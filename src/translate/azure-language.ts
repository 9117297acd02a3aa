/**
 * What the two Azure AI Language translators share (docs/vendors/native-ops.md section 5): the
 * documents of a request (`text` as a string or a batch; ids are the batch positions), their answer read
 * back per document, and the text records of spec 1 counted locally for the documents the upstream
 * analysed and nothing else: a document in `errors`, or one the answer does not mention (incomplete), is
 * not billed. Azure Language errors put the useful message in `error.innererror`.
 */
import { GatewayError } from '../errors.js';
import { documentRecords } from '../meters/counters/text-records.js';

/** The documents of `text`: a string is one document, an array a batch. */
export function documentsOf(text: unknown): string[] {
  return Array.isArray(text) ? (text as string[]) : [text as string];
}

/**
 * `analysisInput` for the documents: id = the document's position in the batch; `language` the
 * client's hint or `auto` (omitting it would mean English to Azure, not detection), absent when
 * `language` is null (LanguageDetection takes none).
 */
export function analysisInput(texts: readonly string[], language: string | null): { documents: Array<Record<string, string>> } {
  return { documents: texts.map((text, i) => ({ id: String(i), text, ...(language === null ? {} : { language }) })) };
}

/** `camelCase` to `snake_case` (`iso6391Name` -> `iso6391_name`). */
function snake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A vendor result in the gateway's snake_case, every level; values are kept as they are. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeKeys(v)]));
}

export function malformed(what = 'language analysis'): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed ${what} answer.`);
}

/** One document's result as the client sees it: its position, then the vendor's fields (no id, no statistics). */
export type ClientDocument = Record<string, unknown> & { index: number };
/** A document the upstream did not analyse (billed nothing). */
export interface ClientDocumentError { index: number; code: string; message: string }

/** The answer's documents, errors and the usage of spec 4.10 (input elements, output elements, text records). */
export interface ReadDocuments {
  documents: ClientDocument[];
  errors: ClientDocumentError[];
  usage: { input_elements: number; output_elements: number; text_records: number };
}

/** The index a vendor document id names (our ids are batch positions), or a malformed answer. */
function indexOf(id: unknown, count: number, seen: Set<number>): number {
  const index = typeof id === 'string' && /^(0|[1-9]\d*)$/.test(id) ? Number(id) : -1;
  if (index < 0 || index >= count || seen.has(index)) throw malformed();
  seen.add(index);
  return index;
}

function documentError(entry: unknown): { code: string; message: string } {
  const error = (entry as { error?: { code?: unknown; message?: unknown; innererror?: { code?: unknown; message?: unknown } } }).error;
  const inner = error?.innererror;
  const code = typeof inner?.code === 'string' ? inner.code : typeof error?.code === 'string' ? error.code : 'Error';
  const message = typeof inner?.message === 'string' ? inner.message : typeof error?.message === 'string' ? error.message : 'The document could not be processed.';
  return { code, message: message.slice(0, 2000) };
}

/**
 * Reads a task's `results` (`{documents, errors}`) for the batch `texts`. `outputs(doc)` gives the
 * texts a document's result generated (its summary, in pieces; none for an analysis): counted with
 * the document (spec 1), each document rounded up to 1,000-element records on its own. Only documents
 * in `documents` are billed; those in `errors` are reported with their reason, and any the answer does
 * not mention as incomplete.
 */
export function readDocuments(results: unknown, texts: readonly string[], outputs: (doc: Record<string, unknown>) => string[]): ReadDocuments {
  const r = results as { documents?: unknown; errors?: unknown } | null;
  if (!r || typeof r !== 'object' || !Array.isArray(r.documents) || (r.errors !== undefined && !Array.isArray(r.errors))) throw malformed();
  const seen = new Set<number>();
  const documents: ClientDocument[] = [];
  const errors: ClientDocumentError[] = [];
  const usage = { input_elements: 0, output_elements: 0, text_records: 0 };
  for (const raw of r.documents as unknown[]) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw malformed();
    const { id, statistics: _statistics, ...rest } = raw as Record<string, unknown>;
    const index = indexOf(id, texts.length, seen);
    const count = documentRecords([texts[index]!, ...outputs(rest)]);
    count.elements.forEach((n, k) => { if (k === 0) usage.input_elements += n; else usage.output_elements += n; });
    usage.text_records += count.records;
    documents.push({ index, ...(snakeKeys(rest) as Record<string, unknown>) });
  }
  for (const raw of (r.errors ?? []) as unknown[]) {
    if (!raw || typeof raw !== 'object') throw malformed();
    errors.push({ index: indexOf((raw as { id?: unknown }).id, texts.length, seen), ...documentError(raw) });
  }
  for (let index = 0; index < texts.length; index++) {
    if (!seen.has(index)) errors.push({ index, code: 'incomplete', message: 'The upstream provider returned no result for this document; it is not billed.' });
  }
  documents.sort((a, b) => a.index - b.index);
  errors.sort((a, b) => a.index - b.index);
  return { documents, errors, usage };
}

/** The text pieces of `list` (`[{text}]`): a malformed answer when one is not a string. */
export function textsOf(list: unknown): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw malformed();
  return list.map((item) => {
    const text = (item as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') throw malformed();
    return text;
  });
}

