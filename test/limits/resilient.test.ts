/**
 * The outage policy around the shared limiter, on a real Redis behind a TCP proxy: an admission
 * whose answer is lost after Redis ran it must not keep its concurrency slot for LEASE_TTL_MS once
 * Redis is back (the CI failure of test/e2e/redis-outage.test.ts: a 429 under a limit of one after
 * the outage).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../src/errors.js';
import { RedisLimiter } from '../../src/limits/redis.js';
import { ResilientLimiter } from '../../src/limits/resilient.js';
import { type LimitScope } from '../../src/limits/types.js';
import { describeRedis, redisUrl } from '../helpers/redis.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const scopes = (): LimitScope[] => [{ scope: 'account', id: `acct_${randomBytes(6).toString('hex')}`, limits: { concurrent_requests: 1, tokens_per_minute: 1_000 } }];

describeRedis('resilient limiter, an answer lost after Redis ran the admission', () => {
  let proxy: TcpProxy;
  let redis: RedisLimiter;
  beforeAll(async () => {
    const target = new URL(redisUrl);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    redis = new RedisLimiter(`redis://127.0.0.1:${proxy.port}/0`, `gwtest:${randomBytes(4).toString('hex')}:`);
    await redis.firstConnection;
  });
  afterAll(async () => { await redis?.close(); await proxy?.close(); });

  it('the Redis limiter says the slot may be taken, and what frees it', async () => {
    const s = scopes();
    proxy.loseReplies();
    const lost = await redis.admit(s, 100).then(() => null, (err: unknown) => err);
    expect(lost).toBeInstanceOf(Error);
    expect((lost as any).undo).toMatchObject({ scopes: s, tokens: 0 });
    await proxy.cut();
    await proxy.restore();
    // Redis did run it: the slot is taken until the undo frees it.
    await expect(retry(() => redis.admit(s, 0))).resolves.toMatchObject({ ok: false, limit: 'concurrency' });
    await redis.finish((lost as any).undo, 0);
    await expect(redis.admit(s, 0)).resolves.toMatchObject({ ok: true });
  });

  it('fail_closed answers unavailable, then frees the slot before the next admission once Redis is back', async () => {
    const limiter = new ResilientLimiter(redis, 'fail_closed');
    const s = scopes();
    proxy.loseReplies();
    await expect(limiter.admit(s, 100)).rejects.toMatchObject({ code: 'limiter_unavailable' });
    await proxy.cut();
    await proxy.restore();
    const admitted = await retry(() => limiter.admit(s, 100));
    expect(admitted.ok).toBe(true);
    // The slot is held by that admission now, and by nothing else.
    await expect(limiter.admit(s, 0)).resolves.toMatchObject({ ok: false, limit: 'concurrency' });
    if (admitted.ok) await limiter.finish(admitted.ticket, 100);
    await expect(limiter.admit(s, 0)).resolves.toMatchObject({ ok: true });
  });
});

/** Calls `admit` until Redis answers (it reconnects in the background after the cut). */
async function retry<T>(admit: () => Promise<T>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await admit();
    } catch (err) {
      const unavailable = err instanceof DependencyUnavailableError || (err as { code?: string }).code === 'limiter_unavailable';
      if (!unavailable || Date.now() > deadline) throw err;
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
}
