/**
 * `text-records`: spec 1 and 4.10. "Per text record, rounded in blocks of 1,000 Unicode text elements,
 * each submitted document counted independently"; summarization counts "each input document together
 * with its generated summary". The `of` values are parallel lists of documents aligned by index (value
 * 0 the input texts, value 1 e.g. the summaries; a plain string is a list of one): document i is every
 * value's item i, its records are ceil(elements / 1000), and the total is the sum over documents.
 * Which documents are billable (the upstream failed none of them) is decided before counting.
 */
import { stringsOf, type Counter } from './counter.js';
import { textElements } from './text-elements.js';

/** Text elements in one text record (spec 1). */
export const TEXT_RECORD_ELEMENTS = 1000;

/** Records for a document of `elements` text elements: whole blocks of 1,000, rounded up; 0 for an empty document. */
export function recordsFor(elements: number): number {
  return Math.ceil(elements / TEXT_RECORD_ELEMENTS);
}

/** One document's count: text elements per part (input first, then e.g. its summary) and its records. */
export interface DocumentCount {
  readonly elements: readonly number[];
  readonly records: number;
}

/** One document: its parts (an absent part, e.g. no summary, counts 0) counted together, then rounded once. */
export function documentRecords(parts: readonly (string | undefined)[]): DocumentCount {
  const elements = parts.map((part) => (part === undefined ? 0 : textElements(part)));
  return { elements, records: recordsFor(elements.reduce((a, b) => a + b, 0)) };
}

/** A request's text records, with what the response reports (spec 4.10: input elements, output elements, text_records). */
export interface TextRecordTally {
  /** Text elements of value 0 (the input documents). */
  readonly inputElements: number;
  /** Text elements of every further value (e.g. the generated summaries). */
  readonly outputElements: number;
  readonly records: number;
  readonly documents: readonly DocumentCount[];
}

/** Counts `values` as parallel document lists; throws CounterInputError on a value that is not a string, string[] or absent. */
export function tallyTextRecords(values: readonly unknown[]): TextRecordTally {
  const lists = values.map((value, i) => stringsOf('text-records', value, i));
  const documentTotal = Math.max(0, ...lists.map((list) => list.length));
  const documents: DocumentCount[] = [];
  let inputElements = 0;
  let outputElements = 0;
  let records = 0;
  for (let d = 0; d < documentTotal; d++) {
    const doc = documentRecords(lists.map((list) => list[d]));
    doc.elements.forEach((n, k) => { if (k === 0) inputElements += n; else outputElements += n; });
    records += doc.records;
    documents.push(doc);
  }
  return { inputElements, outputElements, records, documents };
}

/** Counts text records: the sum over documents of ceil(elements / 1000). */
export const textRecords: Counter = {
  name: 'text-records',
  unit: 'text_record',
  count: (values) => tallyTextRecords(values).records,
};
