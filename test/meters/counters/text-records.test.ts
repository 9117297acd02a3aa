/**
 * `text-records` (spec 1 and 4.10): per document, ceil(text elements / 1000); summarization counts each
 * input document together with its summary; every document on its own.
 */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { documentRecords, recordsFor, tallyTextRecords, textRecords } from '../../../src/meters/counters/text-records.js';

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // 1 element, 7 code points
const THUMBS_MEDIUM = '\u{1F44D}\u{1F3FD}'; // 1 element, 2 code points
const FRANCE = '\u{1F1EB}\u{1F1F7}'; // 1 element, 2 code points
const count = (values: unknown[]): number => textRecords.count(values);

describe('text-records counter', () => {
  it('rounds each document up to blocks of 1,000 elements', () => {
    expect([0, 1, 999, 1000, 1001, 2000, 2001].map(recordsFor)).toEqual([0, 1, 1, 1, 2, 2, 3]);
    expect(count([['a'.repeat(999)]])).toBe(1);
    expect(count([['a'.repeat(1000)]])).toBe(1);
    expect(count([['a'.repeat(1001)]])).toBe(2);
    expect(count(['a'.repeat(1001)])).toBe(2); // a plain string is one document
  });

  it('counts text elements, not code points or UTF-16 units', () => {
    expect(count([THUMBS_MEDIUM.repeat(1000)])).toBe(1); // 2,000 code points
    expect(count([THUMBS_MEDIUM.repeat(1001)])).toBe(2);
    expect(count([FAMILY.repeat(999)])).toBe(1); // 6,993 code points
    expect(count([FAMILY.repeat(1001)])).toBe(2);
    expect(count([FRANCE.repeat(1000)])).toBe(1); // regional indicators pair up in order
    expect(count(['e\u0301'.repeat(1000)])).toBe(1); // 2,000 characters
    expect(count(['e\u0301'.repeat(1001)])).toBe(2);
    expect(count(['\u1100\u1161\u11A8'.repeat(1000)])).toBe(1); // Hangul jamo L V T, 3,000 code points
    expect(count(['你'.repeat(1000)])).toBe(1);
    expect(count(['你'.repeat(1001)])).toBe(2);
  });

  it('counts each document independently; an empty document is 0 records and changes nothing else', () => {
    expect(count([['a'.repeat(500), 'b'.repeat(500)]])).toBe(2); // one document of 1,000 would be 1
    expect(count([['a'.repeat(1001), '', 'b']])).toBe(3);
    expect(tallyTextRecords([['a'.repeat(1001), '', 'b']]).documents.map((d) => d.records)).toEqual([2, 0, 1]);
    expect(count([['']])).toBe(0);
  });

  it('counts an input document together with its summary', () => {
    expect(count([['x'.repeat(600)], ['y'.repeat(500)]])).toBe(2); // 1,100 elements
    expect(count([['x'.repeat(400)], ['y'.repeat(300)]])).toBe(1); // 700 together; apart it would be 1 + 1
    expect(count([['x'.repeat(1000)], ['y']])).toBe(2); // the input alone is 1
    expect(count(['x'.repeat(999), 'y'])).toBe(1); // plain strings: one document with one summary
  });

  it('tallies a summarization batch per document, with input and output elements', () => {
    const tally = tallyTextRecords([['a'.repeat(400), 'b'.repeat(999), ''], ['s'.repeat(300), 'tt', '']]);
    expect(tally.documents).toEqual([
      { elements: [400, 300], records: 1 },
      { elements: [999, 2], records: 2 },
      { elements: [0, 0], records: 0 },
    ]);
    expect(tally).toMatchObject({ inputElements: 1399, outputElements: 302, records: 3 });
  });

  it('counts a document without a summary (shorter or absent list) by its input alone', () => {
    expect(count([['a'.repeat(600), 'b'.repeat(600)], ['c'.repeat(500)]])).toBe(3); // 1,100 -> 2, 600 -> 1
    expect(count([['a'.repeat(1001)], undefined])).toBe(2);
    expect(tallyTextRecords([['a'.repeat(1001)], undefined])).toMatchObject({ inputElements: 1001, outputElements: 0, records: 2 });
  });

  it('is 0 with no documents', () => {
    expect(count([])).toBe(0);
    expect(count([[]])).toBe(0);
    expect(count([undefined, undefined])).toBe(0);
    expect(tallyTextRecords([])).toEqual({ inputElements: 0, outputElements: 0, records: 0, documents: [] });
  });

  it('counts one document from its parts', () => {
    expect(documentRecords(['x'.repeat(600), 'y'.repeat(500)])).toEqual({ elements: [600, 500], records: 2 });
    expect(documentRecords([FAMILY, undefined])).toEqual({ elements: [1, 0], records: 1 });
    expect(documentRecords([])).toEqual({ elements: [], records: 0 });
  });

  it('has its name and unit', () => {
    expect(textRecords.name).toBe('text-records');
    expect(textRecords.unit).toBe('text_record');
  });

  it('throws CounterInputError naming the wrong value', () => {
    expect(() => count([['a', 7]])).toThrow(CounterInputError);
    expect(() => count([['a', 7]])).toThrow('counter text-records: value 0 item 1 is a number; expected a string');
    expect(() => count([['a'], { x: 1 }])).toThrow('counter text-records: value 1 is an object; expected a string, an array of strings, or nothing');
    expect(() => count([12])).toThrow('counter text-records: value 0 is a number');
  });
});
