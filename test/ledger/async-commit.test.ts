import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.js';
import { batchStatement, RELEASE_ONE, RESERVE_ONE, SETTLE_ONE } from '../../src/ledger/hold-statements.js';
import type { Db, Queryable, Statement } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n;
let seq = 0;
const holdId = () => `hold_async_${Date.now()}_${seq++}`;

/**
 * Migration 006: a ledger_batch without a settle commits with synchronous_commit = off (issue 8: a
 * reserve or a release need not wait for the WAL flush); one with a settle keeps the server's setting.
 */
describeStore(`ledger_batch commit mode (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  let client: pg.Client | null = null;
  /** One connection, so that a setting left behind by a call would be seen by the next statement. */
  let conn: Queryable;
  let accountId: string;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
    accountId = (await ledger.createAccount({ balanceNano: 1000n * X, creditLimitNano: 0n })).id;
    if (t.databaseUrl) {
      client = new pg.Client({ connectionString: t.databaseUrl });
      await client.connect();
      conn = { query: async <T>(sql: string, params?: unknown[]) => (await client!.query(sql, params)).rows as T[] };
    } else {
      conn = t.db;
    }
  });
  afterAll(async () => { await client?.end(); await t?.dispose(); });

  const setting = async () => (await conn.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))[0]!.s;
  const batch = (b: { reserve?: unknown[]; release?: string[]; settle?: unknown[] }) =>
    JSON.stringify({ reserve: b.reserve ?? [], release: b.release ?? [], settle: b.settle ?? [] });
  const reserveItem = (hold: string) => ({ hold, account: accountId, amount: String(X), ttl_ms: 60_000 });
  const settleItem = (hold: string) => ({
    hold, account: accountId,
    rows: [{ id: `use_${hold}`, request_id: hold, model: 'm', kind: 'tokens', quantity: '1', unit: 'token', amount: '5', details: {}, key_id: null }],
  });

  /** Runs one ledger_batch in an explicit transaction and reads synchronous_commit after it, in the same transaction. */
  const modeInside = async (payload: string): Promise<string> => {
    await conn.query('BEGIN');
    try {
      await conn.query('SELECT kind, n, status FROM ledger_batch($1::jsonb)', [payload]);
      return await setting();
    } finally {
      await conn.query('COMMIT');
    }
  };

  it('turns synchronous_commit off for the transaction of a batch of reserves and releases only', async () => {
    const before = await setting();
    expect(before).toBe('on');
    const a = holdId();
    const b = holdId();
    expect(await modeInside(batch({ reserve: [reserveItem(a), reserveItem(b)] }))).toBe('off');
    expect(await modeInside(batch({ release: [a] }))).toBe('off');
    // Transaction-local: the connection is back to its own setting once the transaction ends.
    expect(await setting()).toBe(before);
    // The money moved as always.
    expect(await ledger.getAccount(accountId)).toMatchObject({ heldNano: X, openHolds: 1 });
    await ledger.release(b);
  });

  it('keeps the server setting for a batch with a settle, even with reserves and releases in it', async () => {
    const a = holdId();
    const b = holdId();
    expect(await modeInside(batch({ reserve: [reserveItem(a)] }))).toBe('off');
    expect(await modeInside(batch({ settle: [settleItem(a)], reserve: [reserveItem(b)] }))).toBe('on');
    expect(await modeInside(batch({ settle: [settleItem(b)] }))).toBe('on');
    for (const line of await ledger.reconcile()) expect(line.differenceNano, line.accountId).toBe(0n);
  });

  it('leaves nothing behind on the connection after an autocommit call', async () => {
    const a = holdId();
    await conn.query('SELECT kind, n, status FROM ledger_batch($1::jsonb)', [batch({ reserve: [reserveItem(a)] })]);
    expect(await setting()).toBe('on');
    await conn.query('SELECT kind, n, status FROM ledger_batch($1::jsonb)', [batch({ release: [a] })]);
    expect(await setting()).toBe('on');
    expect(await ledger.getAccount(accountId)).toMatchObject({ heldNano: 0n, openHolds: 0 });
  });
});

/**
 * The statements a batch of one runs (src/ledger/hold-statements.ts): a reserve and a release on the
 * store's connections that commit without the WAL flush, a settle on those that wait for it.
 */
describeStore(`hold statements' commit mode (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => { t = await openTestDb(); });
  afterAll(() => t?.dispose());

  const modeOf = async (commit: Statement['commit']) =>
    (await t.db.run<{ s: string }>({ name: `probe_${commit}`, commit, text: "SELECT current_setting('synchronous_commit') AS s" }, []))[0]!.s;

  it('declares async commits for reserve and release only', () => {
    expect([RESERVE_ONE.commit, RELEASE_ONE.commit, SETTLE_ONE.commit]).toEqual(['async', 'async', 'durable']);
    expect(batchStatement(true).commit).toBe('durable');
    expect(batchStatement(false).commit).toBe('async');
  });

  it.runIf(storeKind === 'postgres')('runs an async statement with synchronous_commit off and a durable one with the server setting', async () => {
    expect(await modeOf('async')).toBe('off');
    expect(await modeOf('durable')).toBe('on');
    // The setting belongs to the async connections: the store's other statements keep the server's.
    expect((await t.db.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))[0]!.s).toBe('on');
  });
});

/**
 * Which statements the ledger sends when a settle and a reserve arrive in the same turn: on PostgreSQL
 * each goes in its own batch (the reserve does not wait for the settle's WAL flush, and runs at the
 * same time on the asynchronous connections); on PGlite, which runs one statement at a time, together.
 */
describeStore(`settles batched apart from reserves (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  const sent: string[] = [];
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    const recording: Db = { ...t.db, run: (statement, params) => { sent.push(`${statement.name}:${statement.commit}`); return t.db.run(statement, params); } };
    ledger = new Ledger(recording);
  });
  afterAll(() => t?.dispose());

  it('sends a settle and a reserve of the same turn together only on PGlite', async () => {
    const accountId = (await ledger.createAccount({ balanceNano: 100n * X, creditLimitNano: 0n })).id;
    const first = holdId();
    expect(await ledger.reserve({ holdId: first, accountId, amountNano: X, ttlMs: 60_000 })).toBe(true);
    sent.length = 0;
    const second = holdId();
    const row = { requestId: 'req_apart', model: 'm', kind: 'tokens', quantity: 1n, unit: 'token', amountNano: 5n, details: {} };
    const [settled, reserved] = await Promise.all([
      ledger.settle({ holdId: first, accountId, rows: [row] }),
      ledger.reserve({ holdId: second, accountId, amountNano: X, ttlMs: 60_000 }),
    ]);
    expect(settled).toHaveLength(1);
    expect(reserved).toBe(true);
    expect(sent.sort()).toEqual(storeKind === 'postgres'
      ? [`${RESERVE_ONE.name}:async`, `${SETTLE_ONE.name}:durable`].sort()
      : ['ledger_batch:durable']);
    expect(await ledger.getAccount(accountId)).toMatchObject({ balanceNano: 100n * X - X - 5n, heldNano: X, openHolds: 1 });
  });
});
