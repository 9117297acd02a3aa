import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger, type UsageRowInput } from '../../src/ledger/ledger.js';
import type { KeyControls } from '../../src/ledger/key-controls.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';

const X = 1_000_000n; // 0.001 USD
let seq = 0;
const holdId = () => `hold_kb_${Date.now()}_${seq++}`;
const row = (amountNano: bigint, keyId: string): UsageRowInput => ({
  requestId: `req_${seq++}`, model: 'm', kind: 'tokens', quantity: 10n, unit: 'token', amountNano, details: {}, keyId,
});
const budget = (budgetNano: bigint, budgetPeriod: KeyControls['budgetPeriod']): KeyControls => ({ budgetNano, budgetPeriod, allowedModels: null, expiresAt: null });
const NOW = new Date('2026-12-03T12:00:00Z');

describeStore(`key budgets (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await openTestDb();
    ledger = new Ledger(t.db);
  });
  afterAll(() => t?.dispose());

  const setup = async (balanceNano: bigint, controls: KeyControls) => {
    const { id: accountId } = await ledger.createAccount({ balanceNano });
    const { id: keyId } = await ledger.createKey(accountId, 'budgeted', controls);
    return { accountId, keyId };
  };
  const reserve = (accountId: string, keyId: string, amountNano: bigint, now = NOW, id = holdId()) =>
    ledger.reserveOnKey({ holdId: id, accountId, amountNano, ttlMs: 60_000, keyId, now });
  const expectBalanced = async () => {
    for (const line of await ledger.reconcile()) expect(line.differenceNano, line.accountId).toBe(0n);
  };

  it('reserves within the budget, refuses past it without touching the account, and counts settles and releases', async () => {
    const { accountId, keyId } = await setup(100n * X, budget(10n * X, 'total'));
    const first = holdId();
    expect(await reserve(accountId, keyId, 6n * X, NOW, first)).toBe('reserved');
    const before = await ledger.getAccount(accountId);
    expect(await reserve(accountId, keyId, 5n * X)).toBe('key_budget_exceeded');
    expect(await ledger.getAccount(accountId)).toEqual(before);
    await ledger.settle({ holdId: first, accountId, rows: [row(2n * X, keyId)] });
    expect((await ledger.getKey(keyId, NOW))!.usage).toMatchObject({ spentNano: 2n * X, heldNano: 0n });
    const second = holdId();
    expect(await reserve(accountId, keyId, 8n * X, NOW, second)).toBe('reserved');
    expect(await reserve(accountId, keyId, 1n)).toBe('key_budget_exceeded');
    await ledger.release(second);
    expect(await reserve(accountId, keyId, 8n * X)).toBe('reserved');
    expect((await ledger.getKey(keyId, NOW))!.usage).toMatchObject({ spentNano: 2n * X, heldNano: 8n * X });
    await expectBalanced();
  });

  it('an id already reserved is not reserved twice, and the balance still guards a key with a budget', async () => {
    const { accountId, keyId } = await setup(3n * X, budget(10n * X, 'month'));
    const id = holdId();
    expect(await reserve(accountId, keyId, 2n * X, NOW, id)).toBe('reserved');
    expect(await reserve(accountId, keyId, 2n * X, NOW, id)).toBe('exists');
    expect(await reserve(accountId, keyId, 2n * X)).toBe('insufficient_balance');
    expect((await ledger.getAccount(accountId))!.heldNano).toBe(2n * X);
  });

  it('a key without a budget reserves on the balance alone, its holds unmarked', async () => {
    const { accountId, keyId } = await setup(3n * X, { budgetNano: null, budgetPeriod: null, allowedModels: null, expiresAt: null });
    expect(await reserve(accountId, keyId, 3n * X)).toBe('reserved');
    expect(await reserve(accountId, keyId, 1n)).toBe('insufficient_balance');
    expect((await ledger.getKey(keyId, NOW))!.usage).toBeNull();
  });

  it('a day budget starts again at UTC midnight; a hold of yesterday settles into yesterday', async () => {
    const { accountId, keyId } = await setup(100n * X, budget(5n * X, 'day'));
    const late = new Date('2026-12-03T23:59:59Z');
    const held = holdId();
    expect(await reserve(accountId, keyId, 5n * X, late, held)).toBe('reserved');
    expect(await reserve(accountId, keyId, 1n, late)).toBe('key_budget_exceeded');
    const next = new Date('2026-12-04T00:00:00Z');
    expect(await reserve(accountId, keyId, 4n * X, next)).toBe('reserved');
    await ledger.settle({ holdId: held, accountId, rows: [row(3n * X, keyId)] });
    expect((await ledger.getKey(keyId, late))!.usage).toEqual({ periodStart: new Date('2026-12-03T00:00:00Z'), spentNano: 3n * X, heldNano: 0n });
    expect((await ledger.getKey(keyId, next))!.usage).toEqual({ periodStart: next, spentNano: 0n, heldNano: 4n * X });
    expect(await reserve(accountId, keyId, X + 1n, next)).toBe('key_budget_exceeded');
  });

  it('a window opens at what the key already spent in its period; a refund gives budget back', async () => {
    const { accountId } = await setup(100n * X, budget(1n, 'total'));
    const { id: keyId } = await ledger.createKey(accountId, 'later');
    const id = holdId();
    expect(await ledger.reserve({ holdId: id, accountId, amountNano: 4n * X, ttlMs: 60_000 })).toBe(true);
    const [charged] = await ledger.settle({ holdId: id, accountId, rows: [row(4n * X, keyId)] });
    await ledger.updateKeyControls(keyId, { budgetNano: 5n * X, budgetPeriod: 'total' });
    expect(await reserve(accountId, keyId, 2n * X)).toBe('key_budget_exceeded');
    const fits = holdId();
    expect(await reserve(accountId, keyId, X, NOW, fits)).toBe('reserved');
    const [marked] = await ledger.settle({ holdId: fits, accountId, rows: [row(X, keyId)] });
    expect((await ledger.getKey(keyId, NOW))!.usage).toMatchObject({ spentNano: 5n * X });
    await ledger.refund(marked!.id);
    expect((await ledger.getKey(keyId, NOW))!.usage).toMatchObject({ spentNano: 4n * X });
    expect(charged).toBeDefined();
    await expectBalanced();
  });

  it('the sweeper ends a hold: expired ones free the budget, a delivered checkpoint is counted as spent', async () => {
    const { accountId, keyId } = await setup(100n * X, budget(10n * X, 'total'));
    const quiet = holdId();
    const streaming = holdId();
    expect(await ledger.reserveOnKey({ holdId: quiet, accountId, amountNano: 4n * X, ttlMs: 1, keyId, now: NOW })).toBe('reserved');
    expect(await ledger.reserveOnKey({ holdId: streaming, accountId, amountNano: 4n * X, ttlMs: 60_000, keyId, now: NOW })).toBe('reserved');
    await ledger.extendHold(streaming, 1, { accountId, rows: [row(3n * X, keyId)] });
    await new Promise((r) => setTimeout(r, 20));
    expect(await ledger.sweepExpiredHolds()).toBeGreaterThanOrEqual(2);
    expect((await ledger.getKey(keyId, NOW))!.usage).toMatchObject({ spentNano: 3n * X, heldNano: 0n });
    expect(await reserve(accountId, keyId, 7n * X)).toBe('reserved');
    expect(await reserve(accountId, keyId, 1n)).toBe('key_budget_exceeded');
    await expectBalanced();
  });

  describe('under concurrency', () => {
    it('200 concurrent reserves and settles never spend past the budget; the account and another key are unaffected', async () => {
      const { accountId, keyId } = await setup(1000n * X, budget(50n * X, 'month'));
      const { id: other } = await ledger.createKey(accountId, 'other');
      const answers = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
        const id = holdId();
        const status = await reserve(accountId, keyId, 2n * X, NOW, id);
        if (status === 'reserved') {
          if (i % 3 === 0) await ledger.release(id);
          else await ledger.settle({ holdId: id, accountId, rows: [row(2n * X, keyId)] });
        }
        return status;
      }));
      const usage = (await ledger.getKey(keyId, NOW))!.usage!;
      expect(usage.heldNano).toBe(0n);
      expect(usage.spentNano).toBeLessThanOrEqual(50n * X);
      expect(usage.spentNano).toBeGreaterThan(0n);
      expect(answers.filter((a) => a === 'key_budget_exceeded').length).toBeGreaterThan(0);
      const account = await ledger.getAccount(accountId);
      expect(account!.balanceNano).toBe(1000n * X - usage.spentNano);
      expect(await ledger.reserveOnKey({ holdId: holdId(), accountId, amountNano: 100n * X, ttlMs: 60_000, keyId: other, now: NOW })).toBe('reserved');
      await expectBalanced();
    });
  });
});
