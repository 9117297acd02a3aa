/**
 * `characters`: Unicode code points (a surrogate pair is one). A vendor that bills characters may count
 * astral characters as two (UTF-16 units): reserve with `utf16-units`, which never counts fewer.
 */
import { sumOverStrings, type Counter } from './counter.js';

/** Code points of `s`: `[...s].length` without the array (a lone surrogate counts as one, as there). */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Counts code points over every string in every value. */
export const characters: Counter = {
  name: 'characters',
  unit: 'character',
  count: (values) => sumOverStrings('characters', values, codePoints),
};
