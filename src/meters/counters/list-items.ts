/**
 * `list-items`: how many distinct items a list names, given as an array of strings or as one
 * comma-separated string (spec 4.12: vision `features` "array or comma-separated string"; spec 1:
 * "Image analysis: per selected feature"). Items are trimmed, empty ones ignored, duplicates counted
 * once (a feature selected twice is one transaction).
 */
import { stringsOf, type Counter } from './counter.js';

/** The distinct, trimmed, non-empty items of an array of strings or of a comma-separated string. */
export function listItems(strings: readonly string[]): string[] {
  const items = strings.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  return [...new Set(items)];
}

/** Counts the distinct items over every value. */
export const listItemsCounter: Counter = {
  name: 'list-items',
  unit: 'item',
  count(values) {
    return listItems(values.flatMap((value, i) => stringsOf('list-items', value, i))).length;
  },
};
