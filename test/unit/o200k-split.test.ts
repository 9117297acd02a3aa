import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { o200kPieceEnd } from '../../src/o200k-split.js';

/** The pieces gpt-tokenizer's pattern finds (a global exec() loop; it never matches empty): the reference. */
function patternPieces(text: string): string[] {
  const pattern = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);
  return Array.from(text.matchAll(pattern), (m) => m[0]);
}

/** The pieces the hand-written scanner finds. */
function scannedPieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const end = o200kPieceEnd(text, at);
    if (end <= at) throw new Error(`no progress at ${at} in ${JSON.stringify(text)}`);
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

/** Texts whose pieces differ between the two, as [text, reference, scanned], at most `limit`. */
function differences(texts: Iterable<string>, limit = 5): Array<[string, string[], string[]]> {
  const found: Array<[string, string[], string[]]> = [];
  for (const text of texts) {
    const expected = patternPieces(text);
    const actual = scannedPieces(text);
    if (JSON.stringify(expected) !== JSON.stringify(actual)) found.push([text, expected, actual]);
    if (found.length >= limit) break;
  }
  return found;
}

/**
 * Every code point from `first` to `last`, each in the given contexts (`$` stands for it), a block
 * of 256 code points to a text (the contexts follow one another: each context is also next to others).
 */
function* everyCodePoint(first: number, last: number, contexts: string[]): Generator<string> {
  for (let block = first; block <= last; block += 256) {
    let text = '';
    for (let cp = block; cp < block + 256 && cp <= last; cp++) {
      const c = String.fromCodePoint(cp);
      for (const context of contexts) text += context.replaceAll('$', c);
    }
    yield text;
  }
}

describe('o200kPieceEnd (the o200k split, by hand)', () => {
  it('splits as the pattern does: words, prefixes, contractions, numbers, punctuation and whitespace', () => {
    const cases = [
      "Hello, world! It's 12345 o'clock\r\n\tTHEY'LL say: 'hi'", 'camelCaseWORDSAnd\u01C5ab', '  \n\n  x', 'a  \t b \u00a0\u3000c',
      ' --> /path/to\r\n/next', '日本語のテキスト。한국어', '\u0301e\u0301 \u0301A', '𝐀𝐚 𝟏𝟐𝟑𝟒 😀👍🏽', '\uD800a\uDC00 \uD800', '\uFEFF\uFEFFx',
    ];
    expect(differences(cases)).toEqual([]);
  });

  it('splits generated text as the pattern does', () => {
    const pieces = [
      'a', 'Z', 'hello', 'World', ' ', '  ', '\n', '\r', '\r\n', '\t', '\u00a0', '\u2028', '\u3000', '\uFEFF', '0', '42', '12345',
      "'", "'s", "'T", "'LL", "'ve", "'Re", "'x", '.', '...', '/', '-->', 'é', 'É', 'ǅ', 'ʰ', '日本', '\u0301', '\u0903', 'ß', 'İ',
      '😀', '👍🏽', '\uD800', '\uDC00', '𝐀', '𝐚', '𠀀', '𝟏', '٣', 'Ⅻ', '\u0000', '\u{E0100}',
    ];
    const composed = fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((parts) => parts.join(''));
    const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    const anyCodePoints = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(fc.property(fc.oneof(composed, anyUnits, anyCodePoints), (text) => {
      expect(scannedPieces(text)).toEqual(patternPieces(text));
    }), { numRuns: 5000 });
  });

  it('classifies every code point as the pattern does', () => {
    // Beside letters of each case, after a space, before a contraction, in runs, after a line break.
    const bmp = ['$', ' a$', '$a ', ' $b', 'A$b ', '$$1', '\n$ ', "$'s", '$$$$'];
    expect(differences(everyCodePoint(0, 0xffff, bmp))).toEqual([]);
    expect(differences(everyCodePoint(0x10000, 0x10ffff, ['A$b ', ' $$$$.', "$'s\n", '1$ ']))).toEqual([]);
  });
});
