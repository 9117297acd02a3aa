import { describe, expect, it } from 'vitest';
import { randomHex, randomId, sortableId } from '../../src/ledger/ids.js';

describe('ids', () => {
  it('randomHex gives the asked number of bytes as hex, different every time, across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const hex = randomHex(12);
      expect(hex).toMatch(/^[0-9a-f]{24}$/);
      seen.add(hex);
    }
    expect(seen.size).toBe(2000);
    expect(() => randomHex(0)).toThrow(RangeError);
    expect(() => randomHex(65)).toThrow(RangeError);
  });

  it('randomId is the prefix and 96 random bits; sortableId sorts by creation', () => {
    expect(randomId('req_')).toMatch(/^req_[0-9a-f]{24}$/);
    const ids = Array.from({ length: 500 }, () => sortableId('use_'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(500);
  });
});
