import { describe, expect, it } from 'vitest';
import { mergeControls, type KeyControls } from '../../src/ledger/key-controls.js';

const NONE: KeyControls = { budgetNano: null, budgetPeriod: null, allowedModels: null, expiresAt: null };

describe('mergeControls (issue 33 item 2)', () => {
  it('keeps absent fields, sets given ones, and clears with null', () => {
    const set = mergeControls(NONE, { budgetNano: 5n, budgetPeriod: 'day', allowedModels: ['a*'] });
    expect(set).toEqual({ budgetNano: 5n, budgetPeriod: 'day', allowedModels: ['a*'], expiresAt: null });
    expect(mergeControls(set, { budgetNano: 7n })).toEqual({ ...set, budgetNano: 7n });
    expect(mergeControls(set, { allowedModels: null })).toEqual({ ...set, allowedModels: null });
  });

  it('clears the period with the budget, and refuses a budget without a period or a period without a budget', () => {
    const set = mergeControls(NONE, { budgetNano: 5n, budgetPeriod: 'month' });
    expect(mergeControls(set, { budgetNano: null })).toEqual(NONE);
    expect(() => mergeControls(NONE, { budgetNano: 1n })).toThrow(/budget_period/);
    expect(() => mergeControls(NONE, { budgetPeriod: 'day' })).toThrow(/budget_usd/);
    expect(() => mergeControls(set, { budgetPeriod: null })).toThrow(/budget_period/);
    expect(() => mergeControls(NONE, { budgetNano: -1n, budgetPeriod: 'day' })).toThrow(/>= 0/);
  });
});
