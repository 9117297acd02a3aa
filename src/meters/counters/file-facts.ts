/**
 * Counters over one measured fact of the request's files (`of: ["files:/<part>"]`): each value is a
 * list of measured facts (src/pipeline/file-probes.ts; inputs measured by `url_inputs` probes too),
 * and the counter sums one named fact over every file. Absent values count none; a file without the
 * fact is a CounterInputError (the route's probe and the counter disagree: a manifest mistake).
 */
import { CounterInputError, describeType, type Counter } from './counter.js';

/** A counter summing the whole-number fact `fact` of every measured file. */
export function factCounter(name: string, unit: string, fact: string): Counter {
  const valueOf = (item: unknown, index: number, at: number): number => {
    const value = item !== null && typeof item === 'object' ? (item as Record<string, unknown>)[fact] : undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new CounterInputError(name, index, `item ${at} has no measured ${fact} (${describeType(value)}); expected a whole number`);
    }
    return value;
  };
  return {
    name,
    unit,
    count(values) {
      let total = 0;
      values.forEach((value, i) => {
        if (value === undefined) return;
        if (!Array.isArray(value)) throw new CounterInputError(name, i, `is ${describeType(value)}; expected a list of measured files`);
        value.forEach((item: unknown, at) => { total += valueOf(item, i, at); });
      });
      return total;
    },
  };
}

/** `pages`: the pages of the measured documents (spec 1 "OCR, document analysis: per processed page"; 4.9 PII redaction "pages are counted locally"). */
export const pagesCounter: Counter = factCounter('pages', 'page', 'pages');

/** `document-characters`: the text characters (code points) of the measured documents (spec 4.9 document translation's reserve). */
export const documentCharactersCounter: Counter = factCounter('document-characters', 'character', 'characters');
