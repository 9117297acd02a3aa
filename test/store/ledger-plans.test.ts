/**
 * The ledger never plans a sequential scan (migration 011, src/store/postgres.ts): a generic plan made
 * while holds was small must not read the whole table once it has grown.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

describeStore('ledger plans', () => {
  let store: { db: Db; databaseUrl?: string; dispose(): Promise<void> };
  beforeAll(async () => { store = await openTestDb(); });
  afterAll(async () => { await store.dispose(); });

  it('every ledger function runs with enable_seqscan off', async () => {
    const rows = await store.db.query<{ proname: string; proconfig: string[] | null }>(
      "SELECT proname, proconfig FROM pg_proc WHERE proname IN ('ledger_batch', 'ledger_settle', 'ledger_reserve', 'ledger_release', 'ledger_expire') ORDER BY proname");
    expect(rows.map((r) => r.proname)).toEqual(['ledger_batch', 'ledger_expire', 'ledger_release', 'ledger_reserve', 'ledger_settle']);
    for (const r of rows) expect(r.proconfig, r.proname).toContain('enable_seqscan=off');
  });

  it.runIf(storeKind === 'postgres')('runs named statements on sessions that never plan a sequential scan, durable or not', async () => {
    for (const commit of ['durable', 'async'] as const) {
      const [row] = await store.db.run<{ enable_seqscan: string }>({ name: `probe_seqscan_${commit}`, commit, text: 'SHOW enable_seqscan' }, []);
      expect(row!.enable_seqscan, commit).toBe('off');
    }
  });

  it.runIf(storeKind === 'postgres')('settles a batch by index on a connection that first planned it when holds was a few pages long', async () => {
    // One connection throughout: generic plans live as long as their connection.
    const client = new pg.Client({ connectionString: store.databaseUrl! });
    await client.connect();
    try {
      const batch = (b: { settle?: unknown[]; reserve?: unknown[] }) =>
        client.query('SELECT kind, n, status FROM ledger_batch($1::jsonb)', [JSON.stringify({ settle: b.settle ?? [], release: [], reserve: b.reserve ?? [] })]);
      const settleOf = (hold: string) => ({ hold, account: 'acct_plans', rows: [{ id: `use_${hold}`, request_id: `req_${hold}`, model: 'm', kind: 'input', quantity: '1', unit: 'token', amount: '1', details: {}, key_id: null }] });
      await client.query("INSERT INTO accounts (id, opening_nano, balance_nano) VALUES ('acct_plans', 1000000000000, 1000000000000)");
      const reserves = Array.from({ length: 400 }, (_, i) => ({ hold: `hold_small_${i}`, account: 'acct_plans', amount: '10', ttl_ms: 600000 }));
      await batch({ reserve: reserves });
      // The first settles on this connection plan ledger_settle while holds is a few pages long.
      for (let i = 0; i < 6; i++) await batch({ settle: [settleOf(`hold_small_${2 * i}`), settleOf(`hold_small_${2 * i + 1}`)] });
      // The table grows (rows written directly: only its size matters here).
      await client.query(`INSERT INTO holds (id, account_id, amount_nano, expires_at, closed_at, outcome)
        SELECT 'hold_big_' || g, 'acct_plans', 1, now(), now(), 'released' FROM generate_series(1, 20000) g`);
      const seqScans = async (): Promise<number> => {
        await client.query('SELECT pg_stat_force_next_flush()');
        await client.query('SELECT 1');
        const { rows } = await client.query<{ n: string }>("SELECT seq_scan AS n FROM pg_stat_user_tables WHERE relname = 'holds'");
        return Number(rows[0]!.n);
      };
      await client.query("SET stats_fetch_consistency = 'none'");
      const before = await seqScans();
      const { rows } = await batch({ settle: [settleOf('hold_small_100'), settleOf('hold_small_101')] });
      expect(rows.map((r) => r.status)).toEqual(['settled', 'settled']);
      expect(await seqScans()).toBe(before);
    } finally {
      await client.end();
    }
  });
});
