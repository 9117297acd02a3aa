/** utf16-units: an upper bound of characters, whichever way astral characters are counted. */
import { describe, expect, it } from 'vitest';
import { characters } from '../../../src/meters/counters/characters.js';
import { CounterInputError } from '../../../src/meters/counters/index.js';
import { utf16Units } from '../../../src/meters/counters/utf16-units.js';

describe('utf16-units', () => {
  it('counts code units: an astral character is two, a BMP one one', () => {
    expect(utf16Units.count(['Hello'])).toBe(5);
    expect(utf16Units.count(['👍🏽 ok'])).toBe(7);
    expect(utf16Units.count([['𝄞', '中文'], undefined])).toBe(4);
  });

  it('is never below the code-point count', () => {
    for (const s of ['', 'abc', '👨‍👩‍👧‍👦', 'e\u0301', '🇫🇷', '𠀀𠀁']) expect(utf16Units.count([s])).toBeGreaterThanOrEqual(characters.count([s]));
  });

  it('refuses what is not text', () => {
    expect(() => utf16Units.count([42])).toThrow(CounterInputError);
  });
});
