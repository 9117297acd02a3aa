import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger, type UsageRowInput } from '../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const row = (amountNano: bigint): UsageRowInput => ({
  requestId: 'req', model: 'm', kind: 'tokens', quantity: 3n, unit: 'token', amountNano, details: {},
});

describeStore(`reconcile (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
  });
  afterAll(() => t?.dispose());

  it('balances after a mixed concurrent workload, and flags a balance tampered with in SQL', async () => {
    const accounts = await Promise.all([0n, 5n * X, 50n * X].map((b, i) => ledger.createAccount({ balanceNano: b, creditLimitNano: BigInt(i) * X })));
    const ids = accounts.map((a) => a.id);
    await ledger.topUp(ids[0]!, 20n * X);
    const work = Array.from({ length: 60 }, async (_, i) => {
      const accountId = ids[i % 3]!;
      const holdId = `hold_rec_${i}`;
      if (!(await ledger.reserve({ holdId, accountId, amountNano: BigInt(1 + (i % 4)) * X, ttlMs: i % 5 === 0 ? 1 : 60_000 }))) return;
      if (i % 5 === 0) return; // left to expire
      if (i % 7 === 0) return ledger.release(holdId);
      if (i % 11 === 0) return; // stays open
      const rows = await ledger.settle({ holdId, accountId, rows: [row(BigInt(i) * 1000n), row(0n)] });
      if (i % 3 === 1) await ledger.refund(rows[0]!.id);
    });
    await Promise.all([...work, ledger.topUp(ids[1]!, 3n * X), ledger.topUp(ids[2]!, 1n)]);
    await sleep(20);
    await ledger.sweepExpiredHolds();

    const lines = await ledger.reconcile();
    const mine = lines.filter((l) => ids.includes(l.accountId));
    expect(mine).toHaveLength(3);
    for (const line of lines) expect(line.differenceNano, line.accountId).toBe(0n);
    const first = mine.find((l) => l.accountId === ids[0])!;
    expect(first.openingNano).toBe(0n);
    expect(first.topupsNano).toBe(20n * X);
    expect(mine.some((l) => l.usageNano > 0n)).toBe(true);
    expect(mine.some((l) => l.refundsNano > 0n)).toBe(true);
    expect(mine.some((l) => l.openHoldsNano > 0n)).toBe(true);
    for (const l of mine) {
      const view = (await ledger.getAccount(l.accountId))!;
      expect(view.heldNano).toBe(l.openHoldsNano);
      expect(view.balanceNano).toBe(l.balanceNano);
    }

    await t.db.query('UPDATE accounts SET balance_nano = balance_nano + 1 WHERE id = $1', [ids[2]]);
    const after = await ledger.reconcile();
    expect(after.find((l) => l.accountId === ids[2])!.differenceNano).toBe(-1n);
    expect(after.find((l) => l.accountId === ids[1])!.differenceNano).toBe(0n);
  });

  it('top-ups must be positive and need an existing account', async () => {
    const { id } = await ledger.createAccount({});
    await expect(ledger.topUp(id, 0n)).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.topUp(id, -5n)).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.topUp('acct_nope', 5n)).rejects.toMatchObject({ code: 'not_found' });
    expect(await ledger.topUp(id, 5n)).toEqual({ id, balanceNano: 5n, creditLimitNano: 0n, heldNano: 0n, openHolds: 0, grantedNano: 0n, openGrants: 0 });
    expect(await ledger.getAccount('acct_nope')).toBeNull();
    await expect(ledger.createAccount({ creditLimitNano: -1n })).rejects.toMatchObject({ code: 'invalid_amount' });
  });
});
