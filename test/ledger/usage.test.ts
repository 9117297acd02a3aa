import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger, LedgerError, type UsageRowInput } from '../../src/ledger/ledger.js';
import { sqlState } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n;
let seq = 0;
const row = (amountNano: bigint, extra: Partial<UsageRowInput> = {}): UsageRowInput => ({
  requestId: `req_${seq}`, model: 'gpt-x', kind: 'tokens', quantity: 100n, unit: 'token', amountNano, details: {}, ...extra,
});

describeStore(`usage rows (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
  });
  afterAll(() => t?.dispose());

  /** An account with `rows` settled under one hold; returns the account id and the rows. */
  const charged = async (rows: UsageRowInput[], balanceNano = 100n * X) => {
    const { id } = await ledger.createAccount({ balanceNano });
    const holdId = `hold_${seq++}`;
    await ledger.reserve({ holdId, accountId: id, amountNano: 0n, ttlMs: 60_000 });
    return { id, rows: await ledger.settle({ holdId, accountId: id, rows }) };
  };

  it('refund appends a negative row pointing at the original and gives the money back, once', async () => {
    const { id, rows } = await charged([row(7n * X, { quantity: 123n, unit: 'token', model: 'm1', requestId: 'req_r' })]);
    const original = rows[0]!;
    expect((await ledger.getAccount(id))!.balanceNano).toBe(93n * X);
    const r = await ledger.refund(original.id);
    expect(r).toMatchObject({
      kind: 'refund', amountNano: -7n * X, quantity: 123n, unit: 'token', model: 'm1', requestId: 'req_r',
      refundOf: original.id, accountId: id,
    });
    expect(r.id).not.toBe(original.id);
    expect((await ledger.getAccount(id))!.balanceNano).toBe(100n * X);
    await expect(ledger.refund(original.id)).rejects.toMatchObject({ code: 'already_refunded' });
    await expect(ledger.refund(r.id)).rejects.toMatchObject({ code: 'invalid_amount' });
    await expect(ledger.refund('use_nope')).rejects.toBeInstanceOf(LedgerError);
    await expect(ledger.refund('use_nope')).rejects.toMatchObject({ code: 'not_found' });
    expect((await ledger.getAccount(id))!.balanceNano).toBe(100n * X);
  });

  it('concurrent refunds of one row: exactly one succeeds, the others are already_refunded', async () => {
    const { id, rows } = await charged([row(5n * X)]);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => ledger.refund(rows[0]!.id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'already_refunded' });
    expect((await ledger.getAccount(id))!.balanceNano).toBe(100n * X);
  });

  it('the database itself allows one refund per row (unique index), not only the app', async () => {
    const { id, rows } = await charged([row(X)]);
    await ledger.refund(rows[0]!.id);
    const err = await t.db
      .query(
        `INSERT INTO usage_rows (id, account_id, request_id, model, kind, quantity, unit, amount_nano, refund_of)
         VALUES ('use_manual', $1, 'r', 'm', 'refund', 1, 'token', -1, $2)`,
        [id, rows[0]!.id],
      )
      .catch((e: unknown) => e);
    expect(sqlState(err)).toBe('23505');
  });

  it('usage rows are append-only: UPDATE, DELETE and TRUNCATE raise', async () => {
    const { rows } = await charged([row(X)]);
    const rowId = rows[0]!.id;
    await expect(t.db.query('UPDATE usage_rows SET amount_nano = 0 WHERE id = $1', [rowId])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM usage_rows WHERE id = $1', [rowId])).rejects.toThrow(/append-only/);
    await expect(t.db.query('TRUNCATE usage_rows CASCADE')).rejects.toThrow(/append-only/);
    const [left] = await t.db.query<{ amount_nano: string }>('SELECT amount_nano FROM usage_rows WHERE id = $1', [rowId]);
    expect(BigInt(left!.amount_nano)).toBe(X);
  });

  it('lists newest first with a cursor, pages of `limit`, next null at the end', async () => {
    const inputs = Array.from({ length: 7 }, (_, i) => row(BigInt(i + 1) * X, { requestId: `req_page_${i}` }));
    const { id, rows } = await charged(inputs.slice(0, 4));
    const holdId = `hold_${seq++}`;
    await ledger.reserve({ holdId, accountId: id, amountNano: 0n, ttlMs: 60_000 });
    rows.push(...(await ledger.settle({ holdId, accountId: id, rows: inputs.slice(4) })));
    const refundRow = await ledger.refund(rows[1]!.id);
    const expected = [...rows, refundRow].map((r) => r.id).reverse();
    await charged([row(X)]); // another account's rows never show up

    const seen: string[] = [];
    const sizes: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await ledger.listUsage(id, { limit: 3, after });
      sizes.push(page.data.length);
      seen.push(...page.data.map((r) => r.id));
      expect(page.data.every((r) => r.accountId === id)).toBe(true);
      if (!page.next) break;
      expect(page.next).toBe(page.data[page.data.length - 1]!.id);
      after = page.next;
    }
    expect(sizes).toEqual([3, 3, 2]);
    expect(seen).toEqual(expected);
    expect(seen[0]).toBe(refundRow.id);
    const all = await ledger.listUsage(id, {});
    expect(all.data.map((r) => r.id)).toEqual(expected);
    expect(all.next).toBeNull();
    expect((await ledger.listUsage(id, { limit: 10_000 })).data).toHaveLength(8);
    await expect(ledger.listUsage(id, { limit: 0 })).rejects.toThrow(RangeError);
    expect(await ledger.listUsage('acct_nope', {})).toEqual({ data: [], next: null });
  });

  it('rows carry the key that spent them, refunds keep it, and listUsage filters by key across pages', async () => {
    const { id } = await ledger.createAccount({ balanceNano: 100n * X });
    const [a, b] = [await ledger.createKey(id), await ledger.createKey(id)];
    const settle = async (rows: UsageRowInput[]) => {
      const holdId = `hold_${seq++}`;
      await ledger.reserve({ holdId, accountId: id, amountNano: 0n, ttlMs: 60_000 });
      return ledger.settle({ holdId, accountId: id, rows });
    };
    // Interleaved, and several rows per hold, so a key's rows are not one contiguous id range.
    const written = [];
    for (let i = 0; i < 4; i++) {
      written.push(...(await settle([row(X, { keyId: a.id }), row(2n * X, { keyId: a.id, kind: 'web_search', unit: 'call' })])));
      written.push(...(await settle([row(3n * X, { keyId: b.id })])));
    }
    written.push(...(await settle([row(X)]))); // no key (the ledger called directly): null
    expect(written.map((r) => r.keyId)).toEqual([...Array.from({ length: 4 }, () => [a.id, a.id, b.id]).flat(), null]);
    const refundRow = await ledger.refund(written[0]!.id);
    expect(refundRow).toMatchObject({ keyId: a.id, refundOf: written[0]!.id });

    // What was stored, not only what settle() echoed.
    const everything = await ledger.listUsage(id, { limit: 500 });
    expect(new Map(everything.data.map((r) => [r.id, r.keyId]))).toEqual(new Map([...written, refundRow].map((r) => [r.id, r.keyId])));

    const pages = async (keyId: string, limit: number) => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let after: string | undefined;
      do {
        const page = await ledger.listUsage(id, { limit, after, keyId });
        expect(page.data.every((r) => r.keyId === keyId && r.accountId === id)).toBe(true);
        seen.push(...page.data.map((r) => r.id));
        sizes.push(page.data.length);
        after = page.next ?? undefined;
      } while (after);
      return { seen, sizes };
    };
    const ofA = [...written.filter((r) => r.keyId === a.id), refundRow].map((r) => r.id).reverse();
    expect(await pages(a.id, 3)).toEqual({ seen: ofA, sizes: [3, 3, 3] });
    expect(await pages(b.id, 3)).toEqual({ seen: written.filter((r) => r.keyId === b.id).map((r) => r.id).reverse(), sizes: [3, 1] });
    // Exactly a page's worth: next is null, not an empty extra page.
    expect((await ledger.listUsage(id, { keyId: b.id, limit: 4 })).next).toBeNull();
    expect(await ledger.listUsage(id, { keyId: 'key_nope' })).toEqual({ data: [], next: null });
    const other = await ledger.createAccount({ balanceNano: 0n });
    expect(await ledger.listUsage(other.id, { keyId: a.id })).toEqual({ data: [], next: null });
  });

  it('exactly 500 rows at limit 500 gives next null; 501 gives a next', async () => {
    const { id } = await charged(Array.from({ length: 501 }, () => row(1n)), 10n * X);
    const first = await ledger.listUsage(id, { limit: 500 });
    expect(first.data).toHaveLength(500);
    expect(first.next).not.toBeNull();
    const second = await ledger.listUsage(id, { limit: 500, after: first.next! });
    expect(second).toMatchObject({ next: null });
    expect(second.data).toHaveLength(1);
  });
});
