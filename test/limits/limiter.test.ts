/** The two limiter backends pass the same table: token buckets, concurrency leases, corrections. */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryLimiter } from '../../src/limits/memory.js';
import { RedisLimiter } from '../../src/limits/redis.js';
import { LEASE_TTL_MS, type Limiter, type LimitScope } from '../../src/limits/types.js';
import { describeRedis, redisUrl } from '../helpers/redis.js';

function account(limits: LimitScope['limits']): LimitScope[] {
  return [{ scope: 'account', id: `acct_${randomBytes(6).toString('hex')}`, limits }];
}

function suite(make: () => Limiter): void {
  const limiter = make();
  afterAll(() => limiter.close());

  it('admits requests up to the per-minute limit, then refuses with a retry time', async () => {
    const scopes = account({ requests_per_minute: 3 });
    for (let i = 0; i < 3; i++) expect((await limiter.admit(scopes, 0)).ok).toBe(true);
    const refused = await limiter.admit(scopes, 0);
    expect(refused).toMatchObject({ ok: false, scope: 'account', limit: 'requests' });
    // One request refills in 60 s / 3 = 20 s.
    expect(refused.ok === false && refused.retryAfterMs).toBeGreaterThan(15_000);
    expect(refused.ok === false && refused.retryAfterMs).toBeLessThanOrEqual(20_000);
  });

  it('limits tokens and corrects the estimate to the billed tokens', async () => {
    const scopes = account({ tokens_per_minute: 1000 });
    const first = await limiter.admit(scopes, 800);
    expect(first.ok).toBe(true);
    expect((await limiter.admit(scopes, 800)).ok === false).toBe(true);
    // The first request really used 100 tokens: 700 come back.
    if (first.ok) await limiter.finish(first.ticket, 100);
    expect((await limiter.admit(scopes, 800)).ok).toBe(true);
  });

  it('holds a concurrency slot until the request finishes', async () => {
    const scopes = account({ concurrent_requests: 2 });
    const a = await limiter.admit(scopes, 0);
    const b = await limiter.admit(scopes, 0);
    const c = await limiter.admit(scopes, 0);
    expect([a.ok, b.ok, c.ok]).toEqual([true, true, false]);
    expect(c).toMatchObject({ limit: 'concurrency' });
    if (a.ok) await limiter.finish(a.ticket, 0);
    expect((await limiter.admit(scopes, 0)).ok).toBe(true);
  });

  it('checks every scope and takes nothing when one refuses', async () => {
    const [acct] = account({ requests_per_minute: 10 });
    const key: LimitScope = { scope: 'key', id: `key_${randomBytes(6).toString('hex')}`, limits: { requests_per_minute: 1 } };
    expect((await limiter.admit([acct!, key], 0)).ok).toBe(true);
    expect(await limiter.admit([acct!, key], 0)).toMatchObject({ ok: false, scope: 'key' });
    // The refused request took nothing from the account: 9 more fit.
    for (let i = 0; i < 9; i++) expect((await limiter.admit([acct!], 0)).ok).toBe(true);
    expect((await limiter.admit([acct!], 0)).ok).toBe(false);
  });

  it('admits everything when no limit is set', async () => {
    const scopes = account({ requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null });
    for (let i = 0; i < 50; i++) expect((await limiter.admit(scopes, 10_000)).ok).toBe(true);
  });

  it('is exact under concurrent admissions', async () => {
    const scopes = account({ requests_per_minute: 25 });
    const results = await Promise.all(Array.from({ length: 100 }, () => limiter.admit(scopes, 0)));
    expect(results.filter((r) => r.ok)).toHaveLength(25);
  });
}

describe('memory limiter', () => {
  suite(() => new MemoryLimiter());

  it('frees the slots of leases past their lifetime (a process that never finished them), oldest first', async () => {
    const limiter = new MemoryLimiter();
    const scopes = account({ concurrent_requests: 3 });
    const t0 = 1_000_000;
    const first = await limiter.admit(scopes, 0, t0);
    await limiter.admit(scopes, 0, t0 + 1000);
    await limiter.admit(scopes, 0, t0 + 2000);
    expect((await limiter.admit(scopes, 0, t0 + 3000)).ok).toBe(false);
    // One lifetime after the first: its slot alone is free again, then the second's.
    expect((await limiter.admit(scopes, 0, t0 + LEASE_TTL_MS)).ok).toBe(true);
    expect((await limiter.admit(scopes, 0, t0 + LEASE_TTL_MS + 1)).ok).toBe(false);
    expect((await limiter.admit(scopes, 0, t0 + LEASE_TTL_MS + 1000)).ok).toBe(true);
    // Finishing the first (already expired) ticket frees nothing it does not hold.
    if (first.ok) await limiter.finish(first.ticket, 0, t0 + LEASE_TTL_MS + 1000);
    expect((await limiter.admit(scopes, 0, t0 + LEASE_TTL_MS + 1001)).ok).toBe(false);
    await limiter.close();
  });
});
describeRedis('redis limiter', () => suite(() => new RedisLimiter(redisUrl, `gwtest:${randomBytes(4).toString('hex')}:`)));
