import { describe, expect, it } from 'vitest';
import { AuthCache, type Caller } from '../../src/pipeline/auth-cache.js';

const TTL = 2000;
const KEY = 'gw-test-key';

const caller = (keyId: string): Caller => ({ accountId: 'acct_1', keyId, accountLimits: null, keyLimits: null });
/** Lets settled promises run their callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A store whose reads wait until the test answers them, and a clock the test moves. */
function harness() {
  const reads: { key: string; answer: (caller: Caller | null) => void; fail: (error: Error) => void }[] = [];
  const store = {
    authenticate: (key: string) => new Promise<Caller | null>((answer, fail) => { reads.push({ key, answer, fail }); }),
  };
  let now = 1_000;
  const cache = new AuthCache(store, TTL, () => now);
  /** KEY looked up once and answered with `keyId`: the cache holds it, fresh. */
  const prime = async (keyId: string) => {
    const first = cache.authenticate(KEY);
    await flush();
    reads.at(-1)!.answer(caller(keyId));
    await first;
  };
  return { cache, reads, prime, advance: (ms: number) => { now += ms; } };
}


describe('AuthCache', () => {
  it('reads a key once however many requests carry it while the read is in flight', async () => {
    const { cache, reads } = harness();
    const answers = Array.from({ length: 50 }, () => cache.authenticate(KEY));
    await flush();
    expect(reads).toHaveLength(1);
    reads[0]!.answer(caller('key_1'));
    expect((await Promise.all(answers)).every((c) => c?.keyId === 'key_1')).toBe(true);
    // Cached: no read for the next request.
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1');
    expect(reads).toHaveLength(1);
  });

  it('refreshes an entry past half its life in the background, serving the cached answer meanwhile', async () => {
    const { cache, reads, prime, advance } = harness();
    await prime('key_1');
    advance(TTL * 0.4);
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1');
    expect(reads).toHaveLength(1); // young enough: no read
    advance(TTL * 0.2);
    // Past half its life: answered from the cache at once (the read below is still unanswered), one read started.
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1');
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1');
    expect(reads).toHaveLength(2);
    reads[1]!.answer(caller('key_2'));
    await flush();
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_2');
    // The refreshed entry lives a whole ttl from its refresh: well past the first entry's expiry, no read.
    advance(TTL * 0.45);
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_2');
    expect(reads).toHaveLength(2);
  });

  it('waits for the store once an entry has expired unused', async () => {
    const { cache, reads, prime, advance } = harness();
    await prime('key_1');
    advance(TTL + 1);
    let settled = false;
    const next = cache.authenticate(KEY).then((c) => { settled = true; return c; });
    await flush();
    expect(settled).toBe(false);
    expect(reads).toHaveLength(2);
    reads[1]!.answer(null); // the key was deleted in another process
    expect(await next).toBeNull();
  });

  it('does not put back a read that started before clear()', async () => {
    const { cache, reads } = harness();
    const before = cache.authenticate(KEY);
    await flush();
    cache.clear(); // the key was rotated in this process while its read was in flight
    reads[0]!.answer(caller('key_old'));
    expect((await before)?.keyId).toBe('key_old'); // that request had been admitted before the change
    const after = cache.authenticate(KEY);
    await flush();
    expect(reads).toHaveLength(2); // not answered from the stale read
    reads[1]!.answer(null);
    expect(await after).toBeNull();
  });

  it('keeps serving a live entry when its background refresh fails, and fails the miss once it has expired', async () => {
    const { cache, reads, prime, advance } = harness();
    await prime('key_1');
    advance(TTL * 0.6);
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1');
    reads[1]!.fail(new Error('store unavailable'));
    await flush();
    expect((await cache.authenticate(KEY))?.keyId).toBe('key_1'); // still within its life
    expect(reads).toHaveLength(3); // and it tries again
    reads[2]!.fail(new Error('store unavailable'));
    await flush();
    advance(TTL);
    const miss = cache.authenticate(KEY);
    await flush();
    reads[3]!.fail(new Error('store unavailable'));
    await expect(miss).rejects.toThrow('store unavailable');
  });

  it('caches an unknown key as unknown', async () => {
    const { cache, reads } = harness();
    const first = cache.authenticate('gw-unknown');
    await flush();
    reads[0]!.answer(null);
    expect(await first).toBeNull();
    expect(await cache.authenticate('gw-unknown')).toBeNull();
    expect(reads).toHaveLength(1);
  });
});
