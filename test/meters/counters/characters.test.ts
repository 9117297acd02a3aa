/** `characters`: Unicode code points (Azure Translator's characters, spec 4.9), surrogate pairs as one. */
import { describe, expect, it } from 'vitest';
import { characters, codePoints } from '../../../src/meters/counters/characters.js';
import { CounterInputError } from '../../../src/meters/counters/counter.js';

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // man ZWJ woman ZWJ girl ZWJ boy
const THUMBS_MEDIUM = '\u{1F44D}\u{1F3FD}'; // thumbs up + skin tone modifier
const FRANCE = '\u{1F1EB}\u{1F1F7}'; // regional indicators F, R

describe('characters counter', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(codePoints('')).toBe(0);
    expect(codePoints('abc')).toBe(3);
    expect('\u{1D11E}'.length).toBe(2); // musical G clef, astral plane
    expect(codePoints('\u{1D11E}')).toBe(1);
    expect(codePoints('a\u{1F600}b')).toBe(3); // 4 UTF-16 units
    expect(codePoints('\u{20000}')).toBe(1); // CJK Extension B, astral
  });

  it('counts every code point of a multi-code-point text element', () => {
    expect(codePoints('e\u0301')).toBe(2); // e + combining acute: 1 text element, 2 characters
    expect(codePoints(THUMBS_MEDIUM)).toBe(2);
    expect(FAMILY.length).toBe(11);
    expect(codePoints(FAMILY)).toBe(7); // 4 people + 3 ZWJ
    expect(codePoints(FRANCE)).toBe(2);
    expect(codePoints('\u1100\u1161\u11A8')).toBe(3); // Hangul jamo L V T (one syllable)
    expect(codePoints('你好世界')).toBe(4);
  });

  it('counts a lone surrogate as one code point, like [...s]', () => {
    expect(codePoints('\uD83D')).toBe(1);
    expect(codePoints('\uD83Dx')).toBe(2);
  });

  it('sums over every string of every value; absent values count 0', () => {
    expect(characters.name).toBe('characters');
    expect(characters.unit).toBe('character');
    expect(characters.count([])).toBe(0);
    expect(characters.count([undefined, []])).toBe(0);
    expect(characters.count(['ab', ['c', '\u{1D11E}'], undefined])).toBe(4);
    expect(characters.count(['x'.repeat(10), ['\u{1F600}'.repeat(5)]])).toBe(15);
  });

  it('throws CounterInputError naming the value and its type', () => {
    const cases: Array<[unknown[], string]> = [
      [[42], 'counter characters: value 0 is a number; expected a string, an array of strings, or nothing'],
      [['ok', { text: 'a' }], 'counter characters: value 1 is an object; expected a string, an array of strings, or nothing'],
      [[null], 'counter characters: value 0 is null; expected a string, an array of strings, or nothing'],
      [[true], 'counter characters: value 0 is a boolean; expected a string, an array of strings, or nothing'],
      [[['a', 1]], 'counter characters: value 0 item 1 is a number; expected a string'],
      [['a', ['b', ['c']]], 'counter characters: value 1 item 1 is an array; expected a string'],
      [[[null]], 'counter characters: value 0 item 0 is null; expected a string'],
    ];
    for (const [values, message] of cases) {
      expect(() => characters.count(values)).toThrow(CounterInputError);
      expect(() => characters.count(values)).toThrow(message);
    }
  });
});
