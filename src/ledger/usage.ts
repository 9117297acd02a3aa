/** Usage rows: insert, list (newest first, cursor paginated) and refund. Rows are never updated. */
import type { Db, Queryable } from '../store/db.js';
import { sqlState } from '../store/db.js';
import { sortableId } from './ids.js';
import { LedgerError, toBig, type UsageRow, type UsageRowInput } from './types.js';

/** Columns selected for a UsageRow, in the order rowFrom expects. */
export const USAGE_COLUMNS =
  'id, account_id, key_id, deployment, request_id, model, kind, quantity, unit, amount_nano, details, refund_of, created_at';

interface DbUsageRow {
  id: string;
  account_id: string;
  key_id: string | null;
  deployment: string | null;
  request_id: string;
  model: string;
  kind: string;
  quantity: unknown;
  unit: string;
  amount_nano: unknown;
  details: Record<string, unknown> | null;
  refund_of: string | null;
  created_at: Date | string;
}

/** Maps a stored row to the API shape. */
export function rowFrom(r: DbUsageRow): UsageRow {
  return {
    id: r.id,
    accountId: r.account_id,
    keyId: r.key_id,
    deployment: r.deployment,
    requestId: r.request_id,
    model: r.model,
    kind: r.kind,
    quantity: toBig(r.quantity),
    unit: r.unit,
    amountNano: toBig(r.amount_nano),
    details: r.details ?? {},
    refundOf: r.refund_of,
    createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at),
  };
}

/** Throws invalid_amount unless the row is a well-formed charge (not a refund, no negative numbers). */
export function checkCharge(row: UsageRowInput): void {
  if (row.kind === 'refund') throw new LedgerError('invalid_amount', "kind 'refund' is written by refund() only");
  if (typeof row.amountNano !== 'bigint' || row.amountNano < 0n) {
    throw new LedgerError('invalid_amount', `usage amount must be a bigint >= 0 (request ${row.requestId})`);
  }
  if (typeof row.quantity !== 'bigint' || row.quantity < 0n) {
    throw new LedgerError('invalid_amount', `usage quantity must be a bigint >= 0 (request ${row.requestId})`);
  }
}

/**
 * Usage details as stored: bigints become decimal strings at any depth; a value holding none is
 * returned as it is (no copy on the common path).
 */
export function storedDetails(details: Record<string, unknown> | undefined): Record<string, unknown> {
  return storedValue(details ?? {}) as Record<string, unknown>;
}

/** Whether a bigint is anywhere in `value` (a walk that allocates nothing: most details hold none). */
function holdsBigint(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsBigint);
  for (const key in value) if (holdsBigint((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** A copy with bigints as decimal strings; a value (or part) holding none is kept as it is. */
function storedValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (!holdsBigint(value)) return value;
  if (Array.isArray(value)) return value.map(storedValue);
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, storedValue(v)]));
}

/**
 * Appends one row (bigints inside `details` are stored as strings, `keyId` or `deployment` absent is
 * NULL); the caller moves the money in the same transaction.
 */
export async function insertUsageRow(
  q: Queryable,
  accountId: string,
  holdId: string | null,
  row: UsageRowInput,
  refundOf: string | null = null,
): Promise<UsageRow> {
  const rows = await q.query<DbUsageRow>(
    `INSERT INTO usage_rows (id, account_id, hold_id, request_id, model, kind, quantity, unit, amount_nano, details, refund_of, key_id, deployment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13) RETURNING ${USAGE_COLUMNS}`,
    [
      sortableId('use_'),
      accountId,
      holdId,
      row.requestId,
      row.model,
      row.kind,
      row.quantity,
      row.unit,
      row.amountNano,
      JSON.stringify(storedDetails(row.details)),
      refundOf,
      row.keyId ?? null,
      row.deployment ?? null,
    ],
  );
  return rowFrom(rows[0]!);
}

/** The rows a hold was settled with, in insertion order. */
export async function rowsOfHold(q: Queryable, holdId: string): Promise<UsageRow[]> {
  const rows = await q.query<DbUsageRow>(
    `SELECT ${USAGE_COLUMNS} FROM usage_rows WHERE hold_id = $1 ORDER BY id`,
    [holdId],
  );
  return rows.map(rowFrom);
}

/**
 * Newest first; `after` is the last id of the previous page; limit 1..500 (default 50, above 500 -> 500).
 * `keyId` keeps only the rows spent by that key (and their refunds), over the index of migration 004.
 */
export async function listUsage(
  db: Db,
  accountId: string,
  opts: { limit?: number; after?: string; keyId?: string },
): Promise<{ data: UsageRow[]; next: string | null }> {
  const requested = opts.limit ?? 50;
  if (!Number.isInteger(requested) || requested < 1) throw new RangeError('limit must be an integer >= 1');
  const limit = Math.min(requested, 500);
  const params: unknown[] = [accountId, opts.after ?? null, limit + 1];
  // The key condition is added to the text, not passed as "$4 IS NULL OR key_id = $4", so that the
  // unfiltered listing's statement is the same as before and the filtered one plainly matches the index.
  const byKey = opts.keyId === undefined ? '' : ` AND key_id = $${params.push(opts.keyId)}`;
  const rows = await db.query<DbUsageRow>(
    `SELECT ${USAGE_COLUMNS} FROM usage_rows
     WHERE account_id = $1 AND ($2::text IS NULL OR id < $2::text)${byKey}
     ORDER BY id DESC LIMIT $3`,
    params,
  );
  const data = rows.slice(0, limit).map(rowFrom);
  const next = rows.length > limit ? data[data.length - 1]!.id : null;
  return { data, next };
}

/**
 * Appends the refund row for `rowId` and gives its amount back; at most once per row (unique index).
 * The refund row keeps the original's keyId (so a key's listing shows its net spend) and deployment.
 */
export async function refund(db: Db, rowId: string): Promise<UsageRow> {
  try {
    return await db.transaction(async (tx) => {
      const found = await tx.query<DbUsageRow>(`SELECT ${USAGE_COLUMNS} FROM usage_rows WHERE id = $1`, [rowId]);
      if (!found[0]) throw new LedgerError('not_found', `usage row ${rowId} not found`);
      const original = rowFrom(found[0]);
      if (original.refundOf !== null) throw new LedgerError('invalid_amount', `${rowId} is a refund row`);
      const prior = await tx.query('SELECT id FROM usage_rows WHERE refund_of = $1', [rowId]);
      if (prior.length) throw new LedgerError('already_refunded', `usage row ${rowId} is already refunded`);
      const row = await insertUsageRow(
        tx,
        original.accountId,
        null,
        { ...original, kind: 'refund', amountNano: -original.amountNano, details: { refund_of: rowId } },
        rowId,
      );
      await tx.query('UPDATE accounts SET balance_nano = balance_nano + $2::bigint WHERE id = $1', [
        original.accountId,
        original.amountNano,
      ]);
      return row;
    });
  } catch (err) {
    // A concurrent refund of the same row won the unique index on refund_of.
    if (sqlState(err) === '23505') throw new LedgerError('already_refunded', `usage row ${rowId} is already refunded`);
    throw err;
  }
}
