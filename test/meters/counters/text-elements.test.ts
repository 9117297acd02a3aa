/** `text-elements`: extended grapheme clusters (Azure AI Language's text elements, spec 4.10). */
import { describe, expect, it } from 'vitest';
import { CounterInputError } from '../../../src/meters/counters/counter.js';
import { textElements, textElementsCounter } from '../../../src/meters/counters/text-elements.js';

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}'; // 7 code points
const THUMBS_MEDIUM = '\u{1F44D}\u{1F3FD}'; // 2 code points
const FRANCE = '\u{1F1EB}\u{1F1F7}';
const GERMANY = '\u{1F1E9}\u{1F1EA}';

describe('text-elements counter', () => {
  it('counts plain text one element per letter', () => {
    expect(textElements('')).toBe(0);
    expect(textElements('abc')).toBe(3);
    expect(textElements('你好世界')).toBe(4); // CJK
    expect(textElements('한국어')).toBe(3); // precomposed Hangul syllables
  });

  it('counts an emoji with a skin tone, a ZWJ family and a flag as one element each', () => {
    expect(textElements(THUMBS_MEDIUM)).toBe(1);
    expect(textElements(THUMBS_MEDIUM + THUMBS_MEDIUM)).toBe(2);
    expect(textElements(FAMILY)).toBe(1);
    expect(textElements(`a${FAMILY}b`)).toBe(3);
    expect(textElements(FRANCE)).toBe(1);
    expect(textElements(FRANCE + GERMANY)).toBe(2);
    expect(textElements(FRANCE + '\u{1F1E9}')).toBe(2); // a pair, then a lone regional indicator
    expect(textElements('1\uFE0F\u20E3')).toBe(1); // keycap one: digit + VS16 + enclosing keycap
  });

  it('joins combining marks, CR LF and Hangul jamo sequences to their base', () => {
    expect(textElements('e\u0301')).toBe(1);
    expect(textElements('cafe\u0301')).toBe(4);
    expect(textElements('a\u0301\u0302\u0303')).toBe(1);
    expect(textElements('\r\n')).toBe(1);
    expect(textElements('a\r\nb')).toBe(3);
    expect(textElements('\u1100\u1161\u11A8')).toBe(1); // L V T
    expect(textElements('\u1112\u1161\u11AB\u1100\u1173\u11AF')).toBe(2); // two decomposed syllables
    expect(textElements('\uAC00\u11A8')).toBe(1); // LV syllable + trailing jamo
  });

  it('sums over every string of every value', () => {
    expect(textElementsCounter.name).toBe('text-elements');
    expect(textElementsCounter.unit).toBe('text_element');
    expect(textElementsCounter.count([])).toBe(0);
    expect(textElementsCounter.count(['ab', [THUMBS_MEDIUM, FRANCE], undefined])).toBe(4);
  });

  it('throws CounterInputError on a wrong type', () => {
    expect(() => textElementsCounter.count([3])).toThrow(CounterInputError);
    expect(() => textElementsCounter.count([3])).toThrow('counter text-elements: value 0 is a number');
    expect(() => textElementsCounter.count([['a', {}]])).toThrow('counter text-elements: value 0 item 1 is an object; expected a string');
  });
});

describe('textElements over long texts (counted window by window)', () => {
  it('equals one pass of the segmenter wherever the windows fall', () => {
    const one = (s: string): number => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].length;
    const pieces = ['a', 'e\u0301', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '中', '\r\n', '\u1100\u1161\u11a8', ' '];
    for (let seed = 1; seed <= 40; seed++) {
      let x = seed;
      let s = '';
      while (s.length < 3000) { x = (x * 1103515245 + 12345) % 2147483648; s += pieces[x % pieces.length]; }
      expect(textElements(s), `seed ${seed}`).toBe(one(s));
    }
  });

  it('keeps a run of regional indicators paired across windows', () => {
    const flags = '🇫🇷'.repeat(700);
    expect(textElements(flags)).toBe(700);
    expect(textElements(`x${flags}`)).toBe(701);
  });

  it('counts a text of about 125,000 elements (the most a job takes) exactly', () => {
    expect(textElements('ab👍🏽'.repeat(125_000 / 3 + 1))).toBe(3 * (Math.floor(125_000 / 3) + 1));
  });
});
