/**
 * Per-key controls (issue 33 item 2; migration 016): a budget per period, the models a key may use
 * and its expiry. Stored on api_keys; the budget is enforced by ledger_reserve_key in the same
 * guarded transaction as the request's hold, and what the key spent in its period is read from its
 * window (key_budget_windows) and its open holds.
 */
import type { Db, Queryable, Statement } from '../store/types.js';
import { LedgerError, toBig } from './types.js';
import type { Limits } from '../limits/types.js';

/** How often a key's budget starts again: UTC day, UTC month, or never. */
export type BudgetPeriod = 'day' | 'month' | 'total';

/** The periods, for validation. */
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'month', 'total'];

/** A key's controls; null is "none" (no budget, every model, never expires). */
export interface KeyControls {
  budgetNano: bigint | null;
  budgetPeriod: BudgetPeriod | null;
  /** Offering ids or patterns with `*` wildcards. */
  allowedModels: string[] | null;
  expiresAt: Date | null;
}

/** A change of controls: an absent field is left as it is, null clears it. */
export type KeyControlsPatch = Partial<KeyControls>;

/** What a key's budget window holds now (the period `now` falls in). */
export interface KeyBudgetUsage { periodStart: Date; spentNano: bigint; heldNano: bigint }

/** A key as GET /admin/keys/{id} shows it. */
export interface KeyDetails {
  id: string;
  accountId: string;
  name: string | null;
  prefix: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  /** The key's own rate limits (issue 4), or null. */
  limits: Limits | null;
  controls: KeyControls;
  /** Null when the key has no budget. */
  usage: KeyBudgetUsage | null;
}

/** The result of a reserve on a key (migration 016). */
export type KeyReserveStatus = 'reserved' | 'key_budget_exceeded' | 'insufficient_balance' | 'exists';

/** One reserve through ledger_reserve_key (migration 016), which sets its own commit to asynchronous. */
export const RESERVE_KEY: Statement = {
  name: 'ledger_reserve_key',
  commit: 'async',
  text: 'SELECT ledger_reserve_key($1, $2, $3::bigint, $4::bigint, $5, $6::timestamptz) AS status',
};

/** The columns of api_keys that hold the controls. */
export const CONTROL_COLUMNS = 'budget_nano, budget_period, allowed_models, expires_at';

/** A row's controls. */
export function controlsOf(row: { budget_nano: unknown; budget_period: string | null; allowed_models: unknown; expires_at: Date | string | null }): KeyControls {
  return {
    budgetNano: row.budget_nano === null || row.budget_nano === undefined ? null : toBig(row.budget_nano),
    budgetPeriod: (row.budget_period as BudgetPeriod | null) ?? null,
    allowedModels: Array.isArray(row.allowed_models) ? (row.allowed_models as string[]) : null,
    expiresAt: row.expires_at === null || row.expires_at === undefined ? null : new Date(row.expires_at),
  };
}

/** The controls after `patch`; invalid_amount when a budget would have no period or a period no budget. */
export function mergeControls(current: KeyControls, patch: KeyControlsPatch): KeyControls {
  const next: KeyControls = { ...current };
  if (patch.budgetNano !== undefined) next.budgetNano = patch.budgetNano;
  if (patch.budgetPeriod !== undefined) next.budgetPeriod = patch.budgetPeriod;
  if (patch.allowedModels !== undefined) next.allowedModels = patch.allowedModels;
  if (patch.expiresAt !== undefined) next.expiresAt = patch.expiresAt;
  // Clearing the budget clears its period with it.
  if (patch.budgetNano === null && patch.budgetPeriod === undefined) next.budgetPeriod = null;
  if ((next.budgetNano === null) !== (next.budgetPeriod === null)) {
    throw new LedgerError('invalid_amount', next.budgetNano === null ? 'budget_period needs a budget_usd' : 'budget_usd needs a budget_period (day, month or total)');
  }
  if (next.budgetNano !== null && next.budgetNano < 0n) throw new LedgerError('invalid_amount', 'budget_usd must be >= 0');
  return next;
}

/** The parameters that store `c` (budget, period, models as JSON, expiry). */
function controlParams(c: KeyControls): unknown[] {
  return [c.budgetNano, c.budgetPeriod, c.allowedModels === null ? null : JSON.stringify(c.allowedModels), c.expiresAt];
}

/** Stores the controls of a key just created (no usage yet: nothing else to move). */
export async function storeControls(q: Queryable, keyId: string, controls: KeyControls): Promise<void> {
  await q.query('UPDATE api_keys SET budget_nano = $2, budget_period = $3, allowed_models = $4::jsonb, expires_at = $5 WHERE id = $1', [keyId, ...controlParams(controls)]);
}

/**
 * Changes a key's controls (live or revoked); with `accountId`, only a key of that account. Answers
 * the controls now stored; not_found for an unknown key, invalid_amount for an incomplete budget.
 */
export async function updateControls(db: Db, keyId: string, patch: KeyControlsPatch, accountId?: string): Promise<KeyControls> {
  return db.transaction(async (tx) => {
    const rows = await tx.query<Parameters<typeof controlsOf>[0]>(
      `SELECT ${CONTROL_COLUMNS} FROM api_keys WHERE id = $1 AND ($2::text IS NULL OR account_id = $2) FOR UPDATE`, [keyId, accountId ?? null]);
    if (!rows[0]) throw new LedgerError('not_found', `key ${keyId} not found`);
    const next = mergeControls(controlsOf(rows[0]), patch);
    await storeControls(tx, keyId, next);
    return next;
  });
}

interface DetailsRow {
  id: string; account_id: string; name: string | null; prefix: string | null; created_at: Date; revoked_at: Date | null; limits: Limits | null;
  budget_nano: unknown; budget_period: string | null; allowed_models: unknown; expires_at: Date | null;
  period_start: Date | null; spent_nano: unknown; held_nano: unknown;
}

/** A key with its controls and, when it has a budget, its window of the period `now` falls in; null if unknown. */
export async function keyDetails(q: Queryable, keyId: string, now: Date, accountId?: string): Promise<KeyDetails | null> {
  const rows = await q.query<DetailsRow>(
    `SELECT k.id, k.account_id, k.name, k.prefix, k.created_at, k.revoked_at, k.limits, k.budget_nano, k.budget_period, k.allowed_models, k.expires_at,
            u.period_start, u.spent_nano, u.held_nano
     FROM api_keys k LEFT JOIN LATERAL key_budget_usage(k.id, $3::timestamptz) u ON true
     WHERE k.id = $1 AND ($2::text IS NULL OR k.account_id = $2)`, [keyId, accountId ?? null, now]);
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id, accountId: row.account_id, name: row.name, prefix: row.prefix, createdAt: new Date(row.created_at), revokedAt: row.revoked_at ? new Date(row.revoked_at) : null, limits: row.limits,
    controls: controlsOf(row),
    usage: row.period_start ? { periodStart: new Date(row.period_start), spentNano: toBig(row.spent_nano), heldNano: toBig(row.held_nano) } : null,
  };
}

/** Reserves a request's hold on a key: guarded by the key's budget when it has one, then by the balance. */
export async function reserveOnKey(db: Db, input: { holdId: string; accountId: string; amountNano: bigint; ttlMs: number; keyId: string; now: Date }): Promise<KeyReserveStatus> {
  if (typeof input.amountNano !== 'bigint' || input.amountNano < 0n) throw new LedgerError('invalid_amount', 'hold amount must be a bigint >= 0');
  if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) throw new RangeError('ttlMs must be a positive integer');
  const rows = await db.run<{ status: KeyReserveStatus }>(RESERVE_KEY, [input.holdId, input.accountId, input.amountNano.toString(), input.ttlMs, input.keyId, input.now]);
  return rows[0]!.status;
}
