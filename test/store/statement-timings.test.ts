/**
 * The ledger's prepared statements timed on the real store (src/observability/stage-timings.ts,
 * timeStatements, with GATEWAY_STAGE_TIMINGS=1): what `npm run bench` reads to set the ledger's round
 * trips inside the gateway beside the same statements sent by a bare client.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { Holds } from '../../src/ledger/holds.js';
import { describeStore, openTestDb } from '../helpers/db.js';
import { loadStageTimings } from '../helpers/stage-timings.js';

describeStore('per-statement timings on the store', () => {
  afterEach(() => { vi.unstubAllEnvs(); vi.resetModules(); });

  it("times the ledger's own reserve and settle on the real store", async () => {
    const { metrics, timings } = await loadStageTimings('1');
    const store = await openTestDb();
    try {
      const db = timings.timeStatements(store.db);
      await db.query("INSERT INTO accounts (id, opening_nano, balance_nano) VALUES ('acct_timed', 1000000, 1000000)");
      const holds = new Holds(db);
      expect(await holds.reserve({ holdId: 'hold_timed', accountId: 'acct_timed', amountNano: 500n, ttlMs: 60_000 })).toBe(true);
      await holds.settle({ holdId: 'hold_timed', accountId: 'acct_timed', rows: [{ requestId: 'req_timed', model: 'm', kind: 'tokens', quantity: 3n, unit: 'token', amountNano: 300n, details: {} }] });
      const h = metrics.STATEMENT_DURATIONS!;
      expect(h.snapshot(['ledger_reserve_one']).count).toBe(1);
      expect(h.snapshot(['ledger_settle_one']).count).toBe(1);
      const [account] = await db.query<{ balance_nano: string }>("SELECT balance_nano::text FROM accounts WHERE id = 'acct_timed'");
      expect(account!.balance_nano).toBe('999700');
    } finally {
      await store.dispose();
    }
  });
});
