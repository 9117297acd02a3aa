/**
 * `files`: how many files the request's file parts hold (spec 4.14 image edits: the hold reserves a
 * bound of input tokens per input image). Each `of` value is a list of measured files
 * (`files:/<part>`, src/pipeline/file-probes.ts); absent counts none.
 */
import { CounterInputError, describeType, type Counter } from './counter.js';

/** Counts the files in every value. */
export const filesCounter: Counter = {
  name: 'files',
  unit: 'file',
  count(values) {
    let total = 0;
    values.forEach((value, i) => {
      if (value === undefined) return;
      if (!Array.isArray(value)) throw new CounterInputError('files', i, `is ${describeType(value)}; expected a list of files`);
      total += value.length;
    });
    return total;
  },
};
