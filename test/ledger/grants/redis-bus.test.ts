/**
 * Reclaim requests over Redis pub/sub (issue 30): two replicas on one PostgreSQL whose LISTEN path is
 * off, so the only wake-up the holder of a grant gets is the Redis message. With a flush interval of a
 * minute, the holder gives its headroom back within the asker's reclaim wait only if it heard it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Grants } from '../../../src/ledger/grants/index.js';
import { RedisReclaimBus } from '../../../src/ledger/grants/redis-bus.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../../../src/ledger/grants/settings.js';
import { Ledger } from '../../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../../helpers/db.js';
import { describeRedis, redisUrl } from '../../helpers/redis.js';

const SETTINGS: GrantSettings = { ...DEFAULT_GRANTS, flushMs: 60_000, reclaimWaitMs: 5_000 };
const describeBoth = storeKind === 'postgres' ? describeRedis : describeStore.skip;

describeBoth('credit grants: reclaim over Redis pub/sub', () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  const prefix = `gw-test-${process.pid}-${Date.now()}:`;
  beforeAll(async () => { t = await openTestDb(); });
  afterAll(async () => { await t?.dispose(); });

  it('a replica holding a grant gives it back when another one publishes a reclaim on Redis', async () => {
    const ledger = new Ledger(t.db);
    const { id: accountId } = await ledger.createAccount({ balanceNano: 1_000_000_000n, creditLimitNano: 0n });
    // No LISTEN: NOTIFY cannot wake the holder; only the bus can.
    const db = { ...t.db, listen: undefined };
    const [asker, holder] = [0, 1].map(() => new Grants(db, () => SETTINGS, () => 1000, undefined, new RedisReclaimBus(redisUrl, prefix)));
    await asker!.start();
    await holder!.start();
    try {
      holder!.book.wantGrant(accountId, 10_000_000n);
      await holder!.book.flush();
      expect(holder!.book.grantOf(accountId)?.live).toBe(true);
      const held = (await ledger.getAccount(accountId))!.heldNano;
      expect(held).toBeGreaterThan(0n);

      await asker!.reclaim(accountId);

      // The holder flushed on the message: its grant's headroom is back in the balance.
      expect((await ledger.getAccount(accountId))!.heldNano).toBe(0n);
    } finally {
      await asker!.close();
      await holder!.close();
    }
  });
});
