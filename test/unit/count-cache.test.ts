import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { countO200kTokens } from '../../src/bpe.js';
import { TextCountCache } from '../../src/count-cache.js';
import { countChatPromptTokens, countTextTokens } from '../../src/tokenize.js';

describe('TextCountCache (remembered counts of long texts)', () => {
  it('answers what it was told, for an equal text built apart', () => {
    const cache = new TextCountCache({ generation: 1000 });
    cache.set('x'.repeat(100), 7);
    expect(cache.get(['x'.repeat(50), 'x'.repeat(50)].join(''))).toBe(7);
    expect(cache.get('y'.repeat(100))).toBeUndefined();
  });

  it('keeps at most two generations of characters, the texts used lately first', () => {
    const cache = new TextCountCache({ generation: 300 });
    const text = (c: string) => c.repeat(100);
    cache.set(text('a'), 1);
    cache.set(text('b'), 2);
    cache.set(text('c'), 3); // the recent generation is full: a, b, c
    cache.set(text('d'), 4); // a, b, c become the older generation
    expect(cache.get(text('a'))).toBe(1); // found in the older one: moved to the recent one (d, a)
    cache.set(text('e'), 5); // recent: d, a, e
    cache.set(text('f'), 6); // d, a, e become the older generation; b and c are dropped
    expect(cache.get(text('b'))).toBeUndefined();
    expect(cache.get(text('c'))).toBeUndefined();
    expect([cache.get(text('a')), cache.get(text('d')), cache.get(text('e')), cache.get(text('f'))]).toEqual([1, 4, 5, 6]);
    expect(cache.weight()).toBeLessThanOrEqual(600);
  });

  it('weighs texts as told (one each: a bound on how many)', () => {
    const cache = new TextCountCache({ generation: 2, weigh: () => 1 });
    for (const [i, text] of ['a', 'b', 'c', 'd', 'e'].entries()) cache.set(text, i);
    expect(['a', 'b', 'c', 'd', 'e'].map((t) => cache.get(t))).toEqual([undefined, undefined, 2, 3, 4]);
    expect(cache.weight()).toBeLessThanOrEqual(4);
  });

  it('finds a long text by its fingerprint, and never answers for another text that shares it', () => {
    const cache = new TextCountCache({ generation: 1_000_000, fingerprintFrom: 100 });
    const a = 'a'.repeat(1000);
    const b = `${'a'.repeat(500)}b${'a'.repeat(499)}`; // same length, differs between two sampled characters
    cache.set(a, 1);
    expect(cache.get(a.split('').join(''))).toBe(1);
    expect(cache.get(b)).toBeUndefined();
    cache.set(b, 2); // same fingerprint: replaces a
    expect(cache.get(b)).toBe(2);
    expect(cache.get(a)).toBeUndefined();
  });

  it('does not keep a text longer than a generation', () => {
    const cache = new TextCountCache({ generation: 100 });
    cache.set('z'.repeat(101), 9);
    expect(cache.get('z'.repeat(101))).toBeUndefined();
    expect(cache.weight()).toBe(0);
  });

  it('gives each prompt text its own count, the first time and when it comes again', () => {
    const english = Array.from({ length: 3000 }, (_, i) => `word${i % 97} ${i}`).join(' ');
    const other = 'x'.repeat(english.length); // as long, far fewer tokens
    const prompt = (content: string) => countChatPromptTokens([{ role: 'user', content }]);
    const first = prompt(english);
    const otherFirst = prompt(other);
    expect(first).toBe(countTextTokens(english) + countTextTokens('user') + 6);
    expect(otherFirst).toBe(countTextTokens(other) + countTextTokens('user') + 6);
    expect(prompt(english.slice(0, -1) + english.at(-1))).toBe(first);
    expect(prompt('x'.repeat(english.length))).toBe(otherFirst);
  });

  it('keeps no prompt alive through a piece it remembers', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const letters = (n: number) => n.toString(26).replace(/[0-9]/g, (d) => 'qrstuvwxyz'[Number(d)]!);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 300; i++) {
      // A prompt as a request body's JSON gives it, with one long word that is not a token (a piece the merge cache keeps).
      const text = (JSON.parse(JSON.stringify({ t: `see https://example.com/averyverylongpathsegment${letters(i)}x and ${'filler text '.repeat(8000)}` })) as { t: string }).t;
      countO200kTokens(text);
    }
    gc();
    // Each piece a view into its prompt would keep 300 x 96,000 characters alive: about 27 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 2 ** 20);
  });
});
