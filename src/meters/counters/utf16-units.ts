/**
 * `utf16-units`: UTF-16 code units (JavaScript's `s.length`). Never fewer than the code points, so
 * it bounds a character count from above however a vendor treats astral characters (a surrogate pair
 * as one character or as two: Translator's `x-metered-usage` is not specific). Used for reservations,
 * where an estimate must never fall short of the bill.
 */
import { sumOverStrings, type Counter } from './counter.js';

/** Counts UTF-16 code units over every string in every value. */
export const utf16Units: Counter = {
  name: 'utf16-units',
  unit: 'character',
  count: (values) => sumOverStrings('utf16-units', values, (s) => s.length),
};
