/**
 * Holds: reserve before the upstream call, then settle (charge actual usage), release (charge
 * nothing) or let the sweeper expire it. Exactly one of settle/release/sweep gives a hold's amount
 * back: the one whose `UPDATE holds ... WHERE closed_at IS NULL` returns the row. Lock order is always
 * hold row, then account row.
 */
import type { Db } from '../store/db.js';
import { checkCharge, insertUsageRow, rowsOfHold } from './usage.js';
import { LedgerError, toBig, type UsageRow, type UsageRowInput } from './types.js';

/** One guarded statement: debit spendable balance and insert the hold, or write nothing. */
const RESERVE = `
WITH debit AS (
  UPDATE accounts SET balance_nano = balance_nano - $3::bigint, held_nano = held_nano + $3::bigint
  WHERE id = $2 AND balance_nano - $3::bigint >= -credit_limit_nano
  RETURNING id
)
INSERT INTO holds (id, account_id, amount_nano, expires_at)
SELECT $1, debit.id, $3::bigint, now() + $4::bigint * interval '1 millisecond' FROM debit
RETURNING id`;

/** Reserves `amountNano` (>= 0) for at most `ttlMs`; false (nothing written) when it does not fit. */
export async function reserve(
  db: Db,
  input: { holdId: string; accountId: string; amountNano: bigint; ttlMs: number },
): Promise<boolean> {
  if (typeof input.amountNano !== 'bigint' || input.amountNano < 0n) {
    throw new LedgerError('invalid_amount', 'hold amount must be a bigint >= 0');
  }
  if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) throw new RangeError('ttlMs must be a positive integer');
  const rows = await db.query(RESERVE, [input.holdId, input.accountId, input.amountNano, input.ttlMs]);
  return rows.length === 1;
}

interface HoldRow {
  account_id: string;
  amount_nano: unknown;
  closed_at: Date | null;
  settled_at: Date | null;
}

/**
 * Closes the hold (giving it back if still open), appends the rows and charges their sum, atomically.
 * A hold already released or swept is still charged. A second settle of the same hold charges nothing
 * and returns the rows of the first.
 */
export async function settle(
  db: Db,
  input: { holdId: string; accountId: string; rows: UsageRowInput[] },
): Promise<UsageRow[]> {
  input.rows.forEach(checkCharge);
  return db.transaction(async (tx) => {
    const found = await tx.query<HoldRow>(
      'SELECT account_id, amount_nano, closed_at, settled_at FROM holds WHERE id = $1 FOR UPDATE',
      [input.holdId],
    );
    const hold = found[0];
    if (!hold || hold.account_id !== input.accountId) {
      throw new LedgerError('not_found', `hold ${input.holdId} not found for account ${input.accountId}`);
    }
    if (hold.settled_at !== null) return rowsOfHold(tx, input.holdId);
    const giveBack = hold.closed_at === null ? toBig(hold.amount_nano) : 0n;
    await tx.query(
      `UPDATE holds SET settled_at = now(), closed_at = coalesce(closed_at, now()),
         outcome = coalesce(outcome, 'settled') WHERE id = $1`,
      [input.holdId],
    );
    const written: UsageRow[] = [];
    let total = 0n;
    for (const row of input.rows) {
      written.push(await insertUsageRow(tx, input.accountId, input.holdId, row));
      total += row.amountNano;
    }
    await tx.query(
      `UPDATE accounts SET balance_nano = balance_nano + $2::bigint - $3::bigint,
         held_nano = held_nano - $2::bigint WHERE id = $1`,
      [input.accountId, giveBack, total],
    );
    return written;
  });
}

/** Closes an open hold and gives its amount back; no usage row. Unknown or closed holds: no-op. */
export async function release(db: Db, holdId: string): Promise<void> {
  await db.query(
    `WITH closed AS (
       UPDATE holds SET closed_at = now(), outcome = 'released'
       WHERE id = $1 AND closed_at IS NULL RETURNING account_id, amount_nano
     )
     UPDATE accounts a SET balance_nano = a.balance_nano + c.amount_nano, held_nano = a.held_nano - c.amount_nano
     FROM closed c WHERE a.id = c.account_id`,
    [holdId],
  );
}

/** Expires due holds in batches; holds locked by a running settle are skipped (it closes them). */
const SWEEP = `
WITH due AS (
  SELECT id FROM holds WHERE closed_at IS NULL AND expires_at < now()
  ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
), closed AS (
  UPDATE holds h SET closed_at = now(), outcome = 'expired'
  FROM due WHERE h.id = due.id AND h.closed_at IS NULL
  RETURNING h.account_id, h.amount_nano
), per_account AS (
  SELECT account_id, sum(amount_nano)::bigint AS amount FROM closed GROUP BY account_id
), credited AS (
  UPDATE accounts a SET balance_nano = a.balance_nano + p.amount, held_nano = a.held_nano - p.amount
  FROM per_account p WHERE a.id = p.account_id RETURNING a.id
)
SELECT (SELECT count(*) FROM closed)::int AS n`;

const SWEEP_BATCH = 1000;

/** Releases every open hold whose expires_at < now; returns how many. */
export async function sweepExpiredHolds(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db.query<{ n: number }>(SWEEP, [SWEEP_BATCH]);
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < SWEEP_BATCH) return total;
  }
}

/**
 * Pushes an open hold's expiry to `ttlMs` from now (a long stream stays reserved while it runs, so
 * the sweeper never releases a request still in flight). A closed or unknown hold is left alone.
 */
export async function extendHold(db: Db, holdId: string, ttlMs: number): Promise<boolean> {
  const rows = await db.query(`UPDATE holds SET expires_at = now() + ($2::bigint * interval '1 millisecond') WHERE id = $1 AND closed_at IS NULL RETURNING id`, [holdId, ttlMs]);
  return rows.length > 0;
}
