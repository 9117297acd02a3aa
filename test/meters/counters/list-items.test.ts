/**
 * `list-items` (spec 4.12 vision `features` "array or comma-separated string"; spec 1 "per selected
 * feature"): distinct trimmed items, in either form, duplicates once.
 */
import { describe, expect, it } from 'vitest';
import { COUNTERS } from '../../../src/meters/counters/index.js';
import { listItems, listItemsCounter } from '../../../src/meters/counters/list-items.js';

describe('list-items counter', () => {
  it('counts an array and a comma-separated string alike', () => {
    expect(listItemsCounter.count([['caption', 'read', 'tags']])).toBe(3);
    expect(listItemsCounter.count(['caption, read ,tags'])).toBe(3);
    expect(COUNTERS.get('list-items')).toBe(listItemsCounter);
  });

  it('ignores empty items and counts a duplicate once', () => {
    expect(listItems(['caption,,read, ', 'read', 'caption'])).toEqual(['caption', 'read']);
    expect(listItemsCounter.count([' , '])).toBe(0);
    expect(listItemsCounter.count([undefined])).toBe(0);
  });

  it('refuses a value that is neither a string nor strings', () => {
    expect(() => listItemsCounter.count([[1, 2]])).toThrow(/expected a string/);
  });
});
