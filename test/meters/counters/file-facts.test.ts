/**
 * `pages` and `document-characters` (issue 12; spec 1 "OCR, document analysis: per processed page",
 * 4.9 PII redaction "pages are counted locally", document translation's reserve): sums of one
 * measured fact over the request's measured files.
 */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { documentCharactersCounter, pagesCounter } from '../../../src/meters/counters/file-facts.js';
import { COUNTERS } from '../../../src/meters/counters/index.js';

describe('file fact counters', () => {
  it('sums the pages of every measured file of every value; absent values count none', () => {
    expect(pagesCounter.count([[{ pages: 7, size_bytes: 10 }, { pages: 2, size_bytes: 3 }], undefined, [{ pages: 1 }]])).toBe(10);
    expect(pagesCounter.count([undefined])).toBe(0);
    expect(COUNTERS.get('pages')).toBe(pagesCounter);
  });

  it('sums the characters of measured documents', () => {
    expect(documentCharactersCounter.count([[{ characters: 1200 }, { characters: 34 }]])).toBe(1234);
    expect(COUNTERS.get('document-characters')).toBe(documentCharactersCounter);
  });

  it('refuses a file without the fact, and a value that is not a list of files', () => {
    expect(() => pagesCounter.count([[{ size_bytes: 10 }]])).toThrow(CounterInputError);
    expect(() => pagesCounter.count([[{ pages: 1.5 }]])).toThrow(/whole number/);
    expect(() => pagesCounter.count(['a string'])).toThrow(/list of measured files/);
  });
});
