import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countO200kTokens, o200kLoaded, parseTiktoken } from '../../src/bpe.js';

/** gpt-tokenizer's count, special-token strings as plain text: the reference src/bpe.ts must equal. */
const reference = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

const root = join(import.meta.dirname, '../..');

describe('countO200kTokens (the compact o200k table)', () => {
  it('reads the table on the first count, not on import', () => {
    expect(o200kLoaded()).toBe(false);
    expect(countO200kTokens('')).toBe(0);
    expect(o200kLoaded()).toBe(false);
    expect(countO200kTokens('hello world')).toBe(2);
    expect(o200kLoaded()).toBe(true);
  });

  it('counts real text exactly as gpt-tokenizer does', () => {
    const files = [
      join(root, 'README.md'), join(root, 'gateway.config.yaml'), join(root, 'src/tokenize.ts'), join(root, 'src/bpe.ts'),
      ...readdirSync(join(root, 'providers')).map((f) => join(root, 'providers', f)),
    ];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(countO200kTokens(text), file).toBe(reference(text));
    }
  });

  it('counts generated text exactly as gpt-tokenizer does (scripts, emoji, digits, contractions, BOMs, lone surrogates)', () => {
    const pieces = [
      'a', 'Z', 'hello', 'World', ' the', '  ', '\n', '\r\n', '\t', ' \n ', '0', '42', '12345', "'s", "'LL", "'ve", '.', '...', '/', '-->',
      'é', 'Ünï', '日本語', 'テキスト', '한국어', 'ё', 'ǅ', 'ʰ', '\u0301', '😀', '👍🏽', '👨‍👩‍👧', '\uFEFF', '\uFEFF\uFEFF', '\uD800', '\uDC00',
      '<|endoftext|>', '<|im_start|>', '{"a":1}', '\u00a0', '\u2028', 'ﬁ', '\u0000', '\u{10FFFF}',
    ];
    const composed = fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((parts) => parts.join(''));
    const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    const anyCodePoints = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(fc.property(fc.oneof(composed, anyUnits, anyCodePoints), (text) => countO200kTokens(text) === reference(text)), { numRuns: 3000 });
  });

  it('counts long runs without spaces exactly as gpt-tokenizer does (the heap merge, and its cache across generations)', () => {
    const scripts = ['กขคงจฉชซญดตถทนบปผพฟภมยรลวศสหอฮะาิีึืุูเแโใไ่้๊๋็์', 'あいうえおかきくけこさしすせそたちつてとアイウエオ', 'abcdef', 'ABCDEFabcdef0123456789+/'];
    let seed = 11;
    const next = (n: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
    for (const alphabet of scripts) {
      for (const length of [40, 200, 700]) {
        const text = Array.from({ length }, () => alphabet[next(alphabet.length)]).join('');
        expect(countO200kTokens(text), `${length} of ${alphabet.slice(0, 6)}`).toBe(reference(text));
      }
    }
    // More distinct pieces than the merge cache holds, then the first ones again.
    const words = Array.from({ length: 9000 }, (_, i) => `ทดสอบ${String.fromCharCode(0x0e01 + (i % 40), 0x0e01 + ((i / 40) | 0) % 40, 0x0e01 + ((i / 1600) | 0))}`);
    const text = words.join(' ');
    expect(countO200kTokens(text)).toBe(reference(text));
    expect(countO200kTokens(words.slice(0, 100).join(' '))).toBe(reference(words.slice(0, 100).join(' ')));
  });

  it('reproduces gpt-tokenizer on text that starts with a byte-order mark', () => {
    for (const text of ['\uFEFF', '\uFEFFbom', ' \uFEFFbom', '\uFEFF\uFEFFx', 'a\uFEFFb', '\uFEFF日本']) {
      expect(countO200kTokens(text), JSON.stringify(text)).toBe(reference(text));
    }
  });

  /** The file in pieces of `size` bytes (the last one shorter). */
  const inPieces = (file: Uint8Array, size: number) => () =>
    Array.from({ length: Math.ceil(file.length / size) }, (_, i) => file.subarray(i * size, (i + 1) * size));

  it('parses a .tiktoken file: base64 bytes and ranks in order, however it is cut in pieces', () => {
    const file = Buffer.from(['YQ== 0', 'Yg== 1', 'YWI= 2', 'YWJj 3', 'w6nDqQ== 4', ''].join('\n'));
    for (let size = 1; size <= file.length; size++) {
      const v = parseTiktoken(inPieces(file, size));
      expect([...v.offsets], `pieces of ${size}`).toEqual([0, 1, 2, 4, 7, 11]);
      expect(Buffer.from(v.bytes).toString(), `pieces of ${size}`).toBe('abababcéé');
    }
    expect(() => parseTiktoken(() => [Buffer.from('YQ== 1\n')])).toThrow(/rank 1/);
    expect(() => parseTiktoken(inPieces(Buffer.from('YQ== 0\nYg== 12\n'), 3))).toThrow(/rank 12 on line 2/);
    let passes = 0;
    const shrinking = () => [Buffer.from(passes++ === 0 ? 'YQ== 0\nYg== 1\n' : 'YQ== 0\n')];
    expect(() => parseTiktoken(shrinking)).toThrow(/1 of 2 lines/);
  });
});
