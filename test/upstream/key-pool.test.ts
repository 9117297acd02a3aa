/** A provider's keys in turn (src/upstream/key-pool.ts, issue 29 item 2). */
import { describe, expect, it } from 'vitest';
import { KeyPool } from '../../src/upstream/key-pool.js';

describe('KeyPool', () => {
  it('uses each key in turn', () => {
    const pool = new KeyPool(['k1', 'k2', 'k3'], ['env:A', 'env:B', 'env:C']);
    expect([1, 2, 3, 4].map(() => pool.next(0)!.value)).toEqual(['k1', 'k2', 'k3', 'k1']);
  });

  it('a resting key is skipped until its time, and the pool says when the first is back', () => {
    const pool = new KeyPool(['k1', 'k2']);
    const k1 = pool.next(0)!;
    pool.rest(k1, 1000);
    expect([pool.next(10)!.value, pool.next(10)!.value]).toEqual(['k2', 'k2']);
    pool.rest(pool.next(10)!, 2000);
    expect(pool.next(10)).toBeNull();
    expect(pool.readyAt()).toBe(1000);
    expect(pool.next(1000)!.value).toBe('k1');
    expect(pool.counts(1500)).toEqual({ usable: 1, resting: 1, removed: 0 });
  });

  it('a removed key stays out; removing it again says so; a pool of removed keys is exhausted', () => {
    const pool = new KeyPool(['k1', 'k2']);
    const k1 = pool.next(0)!;
    expect(pool.remove(k1)).toBe(true);
    expect(pool.remove(k1)).toBe(false);
    expect([pool.next(0)!.value, pool.next(0)!.value]).toEqual(['k2', 'k2']);
    expect(pool.any()!.value).toBe('k2');
    expect(pool.exhausted).toBe(false);
    pool.remove(pool.next(0)!);
    expect(pool.exhausted).toBe(true);
    expect(pool.next(0)).toBeNull();
    expect(pool.any()).toBeNull();
    expect(pool.readyAt()).toBeNull();
  });

  it('an empty pool (a simulated provider) gives no key and is not exhausted', () => {
    const pool = new KeyPool([]);
    expect(pool.size).toBe(0);
    expect(pool.next()).toBeNull();
    expect(pool.exhausted).toBe(false);
  });
});
