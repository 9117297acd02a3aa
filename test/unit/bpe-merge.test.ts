import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeByHeap, mergeByScan, mergeCount, type RankOf } from '../../src/bpe-merge.js';

/**
 * A made-up vocabulary over `bytes`: every single byte is a token, and a longer run is one when a
 * hash of its bytes (seeded) falls under `density`; its rank is another hash, from a small range so
 * that equal ranks (ties, broken leftmost first) are common.
 */
function vocabulary(bytes: number[], seed: number, density: number): RankOf {
  return (from, to) => {
    let h = seed >>> 0;
    for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
    if ((h & 0xffff) / 0x10000 >= density) return Infinity;
    return (h >>> 16) % 50;
  };
}

describe('byte-pair merging', () => {
  it('merges by heap exactly as by scanning (ties leftmost first)', () => {
    const input = fc.record({
      bytes: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 300, size: 'max' }),
      seed: fc.integer(),
      density: fc.double({ min: 0.1, max: 0.9, noNaN: true }),
    });
    fc.assert(fc.property(input, ({ bytes, seed, density }) => {
      const rankOf = vocabulary(bytes, seed, density);
      expect(mergeByHeap(bytes.length, rankOf)).toBe(mergeByScan(bytes.length, rankOf));
    }), { numRuns: 2000 });
  });

  it('merges a run that is all one token down to one part, and nothing when no pair is a token', () => {
    const all: RankOf = (from, to) => to - from; // shorter merges first: every run is a token
    const none: RankOf = () => Infinity;
    for (const length of [1, 2, 3, 95, 96, 97, 500]) {
      expect(mergeCount(length, all), `${length} bytes, all tokens`).toBe(1);
      expect(mergeCount(length, none), `${length} bytes, no pair a token`).toBe(length);
    }
    expect(mergeCount(0, all)).toBe(0);
  });

  it('refuses a piece too long for its heap keys', () => {
    expect(() => mergeByHeap(2 ** 24, () => Infinity)).toThrow(RangeError);
  });
});
