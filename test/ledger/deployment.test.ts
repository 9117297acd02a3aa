/**
 * Usage rows carry the deployment that served them (issue 29 item 7, migration 012) on every path that
 * writes them: a lone settle (its own statement, SETTLE_ONE), several settles of one turn
 * (ledger_batch -> ledger_settle), the sweeper settling a delivered checkpoint (ledger_expire ->
 * ledger_settle) and a refund (a copy of its row's). Rows written without one read null.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger, type UsageRowInput } from '../../src/ledger/ledger.js';
import { SETTLE_ONE } from '../../src/ledger/hold-statements.js';
import type { Db } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n;
let seq = 0;
const holdId = () => `hold_dep_${Date.now()}_${seq++}`;
const row = (amountNano: bigint, extra: Partial<UsageRowInput> = {}): UsageRowInput => ({
  requestId: `req_dep_${seq++}`, model: 'gpt-4o', kind: 'tokens', quantity: 10n, unit: 'token', amountNano, details: {}, ...extra,
});

describeStore(`usage rows carry deployment (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  /** The names of the prepared statements the ledger ran, in order. */
  const sent: string[] = [];
  beforeAll(async () => {
    t = await openTestDb();
    const recording: Db = { ...t.db, run: (statement, params) => { sent.push(statement.name); return t.db.run(statement, params); } };
    ledger = new Ledger(recording);
  });
  afterAll(() => t?.dispose());

  const account = async () => (await ledger.createAccount({ balanceNano: 100n * X })).id;
  const reserved = async (accountId: string) => {
    const h = holdId();
    expect(await ledger.reserve({ holdId: h, accountId, amountNano: X, ttlMs: 60_000 })).toBe(true);
    return h;
  };
  /** What the store holds, by request id: [deployment, key id]. */
  const stored = async (accountId: string) =>
    new Map((await ledger.listUsage(accountId, { limit: 500 })).data.map((r) => [r.requestId, [r.deployment, r.keyId]]));

  it('a lone settle (SETTLE_ONE) stores each row\'s deployment; a row without one is null', async () => {
    const id = await account();
    const h = await reserved(id);
    sent.length = 0;
    const rows = await ledger.settle({ holdId: h, accountId: id, rows: [
      row(X, { deployment: 'openai/gpt-4o', keyId: 'key_a' }), row(X, { deployment: null }), row(X),
    ] });
    expect(sent).toEqual([SETTLE_ONE.name]);
    expect(rows.map((r) => r.deployment)).toEqual(['openai/gpt-4o', null, null]);
    expect(await stored(id)).toEqual(new Map([
      [rows[0]!.requestId, ['openai/gpt-4o', 'key_a']], [rows[1]!.requestId, [null, null]], [rows[2]!.requestId, [null, null]],
    ]));
    // A second settle charges nothing and answers the stored rows, deployment included.
    const again = await ledger.settle({ holdId: h, accountId: id, rows: [row(X, { deployment: 'other' })] });
    expect(again.map((r) => r.deployment)).toEqual(['openai/gpt-4o', null, null]);
  });

  it('settles of one turn (ledger_batch) store each row\'s deployment', async () => {
    const id = await account();
    const holds = [await reserved(id), await reserved(id), await reserved(id)];
    const deployments = ['azure-eu', 'openai/gpt-4o', null];
    sent.length = 0;
    const settled = await Promise.all(holds.map((h, i) => ledger.settle({ holdId: h, accountId: id, rows: [
      row(X, { deployment: deployments[i] }), row(X / 2n, { kind: 'web_search', unit: 'call', quantity: 1n, deployment: deployments[i] }),
    ] })));
    expect(sent).toEqual(['ledger_batch']);
    expect(settled.map((rows) => rows.map((r) => r.deployment))).toEqual(deployments.map((d) => [d, d]));
    const byRequest = await stored(id);
    for (const [i, rows] of settled.entries()) for (const r of rows) expect(byRequest.get(r.requestId)).toEqual([deployments[i], null]);
    expect((await ledger.getAccount(id))!.balanceNano).toBe(100n * X - 3n * (X + X / 2n));
  });

  it('the sweeper settles a delivered checkpoint with its rows\' deployments', async () => {
    const id = await account();
    const h = await reserved(id);
    const delivered = [row(2n * X, { deployment: 'anthropic/claude', keyId: 'key_b' }), row(X / 4n)];
    expect(await ledger.extendHold(h, 1, { accountId: id, rows: delivered })).toBe(true);
    const [checkpoint] = await t.db.query<{ delivered: Array<{ deployment: string | null }> }>('SELECT delivered FROM holds WHERE id = $1', [h]);
    expect(checkpoint!.delivered.map((r) => r.deployment)).toEqual(['anthropic/claude', null]);
    await new Promise((r) => setTimeout(r, 20));
    expect(await ledger.sweepExpiredHolds()).toBe(1);
    expect(await stored(id)).toEqual(new Map([[delivered[0]!.requestId, ['anthropic/claude', 'key_b']], [delivered[1]!.requestId, [null, null]]]));
  });

  it('a refund copies the deployment of the row it refunds (null stays null)', async () => {
    const id = await account();
    const [served, plain] = await ledger.settle({ holdId: await reserved(id), accountId: id, rows: [row(X, { deployment: 'openai/gpt-4o' }), row(X)] });
    const refunds = [await ledger.refund(served!.id), await ledger.refund(plain!.id)];
    expect(refunds.map((r) => [r.refundOf, r.deployment])).toEqual([[served!.id, 'openai/gpt-4o'], [plain!.id, null]]);
    const listed = new Map((await ledger.listUsage(id)).data.map((r) => [r.id, r.deployment]));
    expect(listed.get(refunds[0]!.id)).toBe('openai/gpt-4o');
    expect(listed.get(refunds[1]!.id)).toBeNull();
  });

  it('a row stored without the column set (as before migration 012) reads null', async () => {
    const id = await account();
    await t.db.query(
      `INSERT INTO usage_rows (id, account_id, request_id, model, kind, quantity, unit, amount_nano)
       VALUES ('use_dep_old_${seq++}', $1, 'req_old', 'm', 'tokens', 1, 'token', 1)`, [id]);
    const [old] = (await ledger.listUsage(id)).data;
    expect(old).toMatchObject({ requestId: 'req_old', deployment: null, keyId: null });
  });
});
