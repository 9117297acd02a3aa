import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger, type UsageRowInput } from '../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n; // 0.001 USD
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 0;
const holdId = () => `hold_${Date.now()}_${seq++}`;
const row = (amountNano: bigint, extra: Partial<UsageRowInput> = {}): UsageRowInput => ({
  requestId: 'req_1', model: 'm', kind: 'tokens', quantity: 10n, unit: 'token', amountNano, details: { side: 'output' }, ...extra,
});

describeStore(`holds (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
  });
  afterAll(() => t?.dispose());

  const account = async (balanceNano: bigint, creditLimitNano = 0n) => (await ledger.createAccount({ balanceNano, creditLimitNano })).id;
  const expectBalanced = async () => {
    for (const line of await ledger.reconcile()) expect(line.differenceNano, line.accountId).toBe(0n);
  };

  it('reserve moves the amount from balance to held, and refuses past -credit_limit', async () => {
    const id = await account(10n * X, 5n * X);
    expect(await ledger.reserve({ holdId: holdId(), accountId: id, amountNano: 12n * X, ttlMs: 60_000 })).toBe(true);
    expect(await ledger.getAccount(id)).toEqual({ id, balanceNano: -2n * X, creditLimitNano: 5n * X, heldNano: 12n * X, openHolds: 1, grantedNano: 0n, openGrants: 0 });
    expect(await ledger.reserve({ holdId: holdId(), accountId: id, amountNano: 3n * X + 1n, ttlMs: 60_000 })).toBe(false);
    expect(await ledger.reserve({ holdId: holdId(), accountId: id, amountNano: 3n * X, ttlMs: 60_000 })).toBe(true);
    expect(await ledger.reserve({ holdId: holdId(), accountId: id, amountNano: 1n, ttlMs: 60_000 })).toBe(false);
    expect(await ledger.reserve({ holdId: holdId(), accountId: 'acct_nope', amountNano: 0n, ttlMs: 60_000 })).toBe(false);
    const view = await ledger.getAccount(id);
    expect(view).toMatchObject({ balanceNano: -5n * X, heldNano: 15n * X, openHolds: 2 });
    await expect(ledger.reserve({ holdId: holdId(), accountId: id, amountNano: -1n, ttlMs: 1000 })).rejects.toMatchObject({ code: 'invalid_amount' });
    await expectBalanced();
  });

  it('200 concurrent reserves: exactly the fitting number succeed, balance never below -credit_limit', async () => {
    const credit = 2n * X;
    const id = await account(48n * X + X / 3n, credit); // room for exactly 50 holds of X
    let minSeen = 0n;
    let done = false;
    const watcher = (async () => {
      while (!done) {
        const v = await ledger.getAccount(id);
        if (v!.balanceNano < minSeen) minSeen = v!.balanceNano;
        await sleep(1);
      }
    })();
    const results = await Promise.all(
      Array.from({ length: 200 }, () => ledger.reserve({ holdId: holdId(), accountId: id, amountNano: X, ttlMs: 60_000 })),
    );
    done = true;
    await watcher;
    expect(results.filter(Boolean)).toHaveLength(50);
    const view = (await ledger.getAccount(id))!;
    expect(view).toMatchObject({ balanceNano: -2n * X + X / 3n, heldNano: 50n * X, openHolds: 50 });
    expect(view.balanceNano >= -credit).toBe(true);
    expect(minSeen >= -credit).toBe(true);
    await expectBalanced();
  });

  it('settle gives the hold back and charges the rows; zero rows are fine', async () => {
    const id = await account(100n * X);
    const h = holdId();
    expect(await ledger.reserve({ holdId: h, accountId: id, amountNano: 30n * X, ttlMs: 60_000 })).toBe(true);
    const rows = await ledger.settle({
      holdId: h, accountId: id,
      rows: [row(7n * X), row(2n * X, { kind: 'web_search', unit: 'call', quantity: 1n }), row(0n, { quantity: 0n })],
    });
    expect(rows.map((r) => [r.kind, r.amountNano, r.accountId, r.refundOf])).toEqual([
      ['tokens', 7n * X, id, null], ['web_search', 2n * X, id, null], ['tokens', 0n, id, null],
    ]);
    expect(rows[0]!.details).toEqual({ side: 'output' });
    expect(rows[0]!.createdAt).toBeInstanceOf(Date);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 91n * X, heldNano: 0n, openHolds: 0 });
    // A second settle charges nothing and returns the first rows.
    const again = await ledger.settle({ holdId: h, accountId: id, rows: [row(50n * X)] });
    expect(again.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    await ledger.release(h);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 91n * X, heldNano: 0n });
    await expectBalanced();
  });

  it('settle may charge more than the hold (what was produced is paid)', async () => {
    const id = await account(5n * X);
    const h = holdId();
    await ledger.reserve({ holdId: h, accountId: id, amountNano: 5n * X, ttlMs: 60_000 });
    await ledger.settle({ holdId: h, accountId: id, rows: [row(8n * X)] });
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: -3n * X, heldNano: 0n });
    await expectBalanced();
  });

  it('settle refuses bad rows, unknown holds and a foreign account, writing nothing', async () => {
    const id = await account(10n * X);
    const h = holdId();
    await ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 });
    await expect(ledger.settle({ holdId: h, accountId: id, rows: [row(-1n)] })).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.settle({ holdId: h, accountId: id, rows: [row(1n, { kind: 'refund' })] })).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.settle({ holdId: h, accountId: id, rows: [row(1n, { quantity: -1n })] })).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.settle({ holdId: 'hold_nope', accountId: id, rows: [] })).rejects.toMatchObject({ code: 'not_found' });
    const other = await account(0n);
    await expect(ledger.settle({ holdId: h, accountId: other, rows: [] })).rejects.toMatchObject({ code: 'not_found' });
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 9n * X, heldNano: X, openHolds: 1 });
    await ledger.release(h);
    await ledger.release(h);
    await ledger.release('hold_never_existed');
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X, heldNano: 0n, openHolds: 0 });
  });

  it('sweep releases only expired holds; a swept hold settled later is still charged once', async () => {
    const id = await account(100n * X);
    const short = holdId();
    const long = holdId();
    await ledger.reserve({ holdId: short, accountId: id, amountNano: 10n * X, ttlMs: 1 });
    await ledger.reserve({ holdId: long, accountId: id, amountNano: 20n * X, ttlMs: 600_000 });
    await sleep(20);
    // The sweeper's tick reads this first and skips its transaction and lock when it is false.
    expect(await ledger.hasExpiredHolds()).toBe(true);
    expect(await ledger.sweepExpiredHolds()).toBeGreaterThanOrEqual(1);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 80n * X, heldNano: 20n * X, openHolds: 1 });
    expect(await ledger.sweepExpiredHolds()).toBe(0);
    expect(await ledger.hasExpiredHolds()).toBe(false);
    await ledger.settle({ holdId: short, accountId: id, rows: [row(4n * X)] });
    await ledger.settle({ holdId: short, accountId: id, rows: [row(4n * X)] });
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 76n * X, heldNano: 20n * X });
    const holdRows = await t.db.query<{ outcome: string }>('SELECT outcome FROM holds WHERE id = $1', [short]);
    expect(holdRows).toEqual([{ outcome: 'expired' }]);
    await expectBalanced();
  });

  it('settle, release and sweep racing on the same holds give each hold back exactly once', async () => {
    const id = await account(1000n * X);
    const ids = Array.from({ length: 20 }, holdId);
    for (const h of ids) await ledger.reserve({ holdId: h, accountId: id, amountNano: 10n * X, ttlMs: 1 });
    await sleep(20);
    await Promise.all(ids.flatMap((h, i) => [
      ...(i % 2 === 0 ? [ledger.settle({ holdId: h, accountId: id, rows: [row(3n * X)] })] : []),
      ledger.release(h),
      ledger.sweepExpiredHolds(),
      ...(i % 2 === 0 ? [ledger.settle({ holdId: h, accountId: id, rows: [row(3n * X)] })] : []),
      ledger.release(h),
    ]));
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 1000n * X - 10n * 3n * X, heldNano: 0n, openHolds: 0 });
    const { data } = await ledger.listUsage(id, { limit: 500 });
    expect(data).toHaveLength(10);
    await expectBalanced();
  });

  it('many accounts settling, releasing and sweeping at once: no deadlock, every hold given back once', async () => {
    const accounts = await Promise.all(Array.from({ length: 8 }, async () => (await ledger.createAccount({ balanceNano: 1000n * X })).id));
    const holds = Array.from({ length: 400 }, (_, i) => ({ id: holdId(), account: accounts[(i * 7) % accounts.length]!, i }));
    const reserved = await Promise.all(holds.map((h) => ledger.reserve({ holdId: h.id, accountId: h.account, amountNano: X, ttlMs: h.i % 5 === 0 ? 1 : 60_000 })));
    expect(reserved.every(Boolean)).toBe(true);
    await sleep(10);
    await Promise.all(holds.flatMap((h) => [
      h.i % 3 === 0 ? ledger.release(h.id) : ledger.settle({ holdId: h.id, accountId: h.account, rows: [row(BigInt(h.i % 4) * X / 4n)] }),
      ...(h.i % 50 === 0 ? [ledger.sweepExpiredHolds()] : []),
    ]));
    const charged = holds.filter((h) => h.i % 3 !== 0).reduce((sum, h) => sum + BigInt(h.i % 4) * X / 4n, 0n);
    const views = await Promise.all(accounts.map((a) => ledger.getAccount(a)));
    expect(views.reduce((sum, v) => sum + v!.balanceNano, 0n)).toBe(8000n * X - charged);
    expect(views.every((v) => v!.heldNano === 0n && v!.openHolds === 0)).toBe(true);
    for (const line of await ledger.reconcile()) expect(line.differenceNano, line.accountId).toBe(0n);
  });

  it('two gateways on one store, each sending its movements alone, give each hold back exactly once', async () => {
    // Each ledger batches only its own calls: one call each per turn, so every movement below runs as
    // its own statement (src/ledger/hold-statements.ts), racing the other gateway's on the same hold.
    const other = new Ledger(t.db);
    const id = await account(1000n * X);
    const ids = Array.from({ length: 30 }, holdId);
    for (const [i, h] of ids.entries()) {
      const [a, b] = i % 2 === 0 ? [ledger, other] : [other, ledger];
      await a.reserve({ holdId: h, accountId: id, amountNano: 10n * X, ttlMs: i % 3 === 0 ? 1 : 60_000 });
    }
    await sleep(20);
    for (const [i, h] of ids.entries()) {
      const settle = (l: Ledger) => l.settle({ holdId: h, accountId: id, rows: [row(3n * X)] });
      await Promise.all(i % 3 === 1 ? [settle(ledger), other.release(h)] : i % 3 === 2 ? [ledger.release(h), settle(other)] : [settle(other), settle(ledger), other.sweepExpiredHolds()]);
    }
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 1000n * X - 30n * 3n * X, heldNano: 0n, openHolds: 0 });
    expect((await ledger.listUsage(id, { limit: 500 })).data).toHaveLength(30);
    await expectBalanced();
  });

  it('bigints in usage details are stored and returned as decimal strings', async () => {
    const id = (await ledger.createAccount({ balanceNano: 10n * X })).id;
    const h = holdId();
    await ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 });
    const [written] = await ledger.settle({ holdId: h, accountId: id, rows: [row(X, { details: { n: 1, big: 12345678901234567890n, nested: [{ b: 2n }] } })] });
    expect(written!.details).toEqual({ n: 1, big: '12345678901234567890', nested: [{ b: '2' }] });
    const { data } = await ledger.listUsage(id);
    expect(data[0]!.details).toEqual(written!.details);
  });

  it('a settle refused as not_found does not fail the others sent with it', async () => {
    const id = (await ledger.createAccount({ balanceNano: 10n * X })).id;
    const ids = [holdId(), holdId()];
    for (const h of ids) await ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 });
    const results = await Promise.allSettled([
      ledger.settle({ holdId: ids[0]!, accountId: id, rows: [row(X)] }),
      ledger.settle({ holdId: 'hold_nope', accountId: id, rows: [row(X)] }),
      ledger.settle({ holdId: ids[1]!, accountId: id, rows: [row(X)] }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 8n * X, heldNano: 0n, openHolds: 0 });
  });

  it('the sweeper leaves a hold it picked alone once the hold was extended (a long stream)', async () => {
    const id = (await ledger.createAccount({ balanceNano: 10n * X })).id;
    const h = holdId();
    await ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 });
    // What the sweeper does with a hold it picked as due: not due any more, so not closed.
    const closed = await t.db.query<{ n: number }>("SELECT ledger_release(ARRAY[$1], 'expired') AS n", [h]);
    expect(Number(closed[0]!.n)).toBe(0);
    expect(await ledger.getAccount(id)).toMatchObject({ heldNano: X, openHolds: 1 });
    await ledger.release(h);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X, heldNano: 0n, openHolds: 0 });
  });

  it('an expired hold with a delivered checkpoint is settled with it; the rest is given back; a late settle charges nothing', async () => {
    const id = await account(10n * X);
    const h = holdId();
    await ledger.reserve({ holdId: h, accountId: id, amountNano: 4n * X, ttlMs: 60_000 });
    // Two checkpoints: the second replaces the first; an extend without rows keeps the last recorded.
    expect(await ledger.extendHold(h, 60_000, { accountId: id, rows: [row(X, { keyId: 'key_a' })] })).toBe(true);
    expect(await ledger.extendHold(h, 60_000, { accountId: id, rows: [row(2n * X, { keyId: 'key_a' }), row(X / 2n, { kind: 'web_search', unit: 'call', quantity: 1n })] })).toBe(true);
    expect(await ledger.extendHold(h, 1)).toBe(true);
    await sleep(20);
    expect(await ledger.sweepExpiredHolds()).toBe(1);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X - 2n * X - X / 2n, heldNano: 0n, openHolds: 0 });
    const rows = (await ledger.listUsage(id)).data;
    expect(rows.map((r) => [r.kind, r.amountNano, r.keyId]).sort()).toEqual([['tokens', 2n * X, 'key_a'], ['web_search', X / 2n, null]]);
    // The request's own settle, arriving after the crash recovery, finds the hold settled: no second charge.
    const late = await ledger.settle({ holdId: h, accountId: id, rows: [row(3n * X)] });
    expect(late.map((r) => r.amountNano).sort((a, b) => (a < b ? -1 : 1))).toEqual([X / 2n, 2n * X]);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X - 2n * X - X / 2n, heldNano: 0n });
    await expectBalanced();
  });

  it('a checkpointed hold that is settled or extended before the sweeper runs is not settled from its checkpoint', async () => {
    const id = await account(10n * X);
    const settled = holdId();
    const extended = holdId();
    for (const h of [settled, extended]) {
      await ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 });
      await ledger.extendHold(h, 60_000, { accountId: id, rows: [row(X / 4n)] });
    }
    await ledger.settle({ holdId: settled, accountId: id, rows: [row(X / 2n)] });
    // Picked as due by the sweeper, but extended since: not due, left open, nothing charged.
    const closed = await t.db.query<{ n: number }>('SELECT ledger_expire(ARRAY[$1, $2]) AS n', [settled, extended]);
    expect(Number(closed[0]!.n)).toBe(0);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X - X / 2n - X, heldNano: X, openHolds: 1 });
    await ledger.release(extended);
    expect((await ledger.listUsage(id)).data.map((r) => r.amountNano)).toEqual([X / 2n]);
    await expectBalanced();
  });

  it('in one batch, a reservation that does not fit is refused alone; the ones after it still fit', async () => {
    const id = (await ledger.createAccount({ balanceNano: 10n * X })).id;
    // The first two calls go out at once, each alone (two batches may be in flight); the last two
    // arrive while those are in flight and share a batch, which cannot take both.
    const results = await Promise.all([X, 2n * X, 20n * X, 7n * X].map((amountNano) => ledger.reserve({ holdId: holdId(), accountId: id, amountNano, ttlMs: 60_000 })));
    expect(results).toEqual([true, true, false, true]);
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 0n, heldNano: 10n * X, openHolds: 3 });
  });

  it('a hold id reserved twice is refused the second time, and the debit is given back', async () => {
    const id = (await ledger.createAccount({ balanceNano: 10n * X })).id;
    const h = holdId();
    const [a, b] = await Promise.all([
      ledger.reserve({ holdId: h, accountId: id, amountNano: X, ttlMs: 60_000 }),
      ledger.reserve({ holdId: h, accountId: id, amountNano: 2n * X, ttlMs: 60_000 }),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const held = a ? X : 2n * X;
    expect(await ledger.getAccount(id)).toMatchObject({ balanceNano: 10n * X - held, heldNano: held, openHolds: 1 });
  });
});
