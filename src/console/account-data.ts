/**
 * What the console shows of an account (issue 13): its keys with last use and this month's spend, its
 * top-ups, and its usage rows under the page's filters, with daily totals for the chart. Time ranges
 * are id ranges: usage row ids start with their creation time (src/ledger/ids.ts sortableId), so every
 * query here runs on the (account_id, key_id, id) index and settling a request writes nothing extra.
 */
import { USAGE_COLUMNS, rowFrom } from '../ledger/usage.js';
import type { UsageRow } from '../ledger/types.js';
import type { Db } from '../store/db.js';

/** A key as the key page lists it. */
export interface KeyListing {
  id: string; name: string | null; prefix: string | null; createdAt: Date; revokedAt: Date | null;
  /** Last billed use (a free call, such as model listing, writes no usage row). */
  lastUsedAt: Date | null;
  spendMonthNano: bigint;
}

/** The smallest usage row id created at or after `at`. */
export function usageIdFloor(at: Date): string {
  return `use_${at.getTime().toString(16).padStart(12, '0')}`;
}

/** The first instant of `now`'s calendar month, UTC. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** The account's keys, newest first, live and revoked. */
export async function listKeys(db: Db, accountId: string, now: Date): Promise<KeyListing[]> {
  const rows = await db.query<{ id: string; name: string | null; prefix: string | null; created_at: Date; revoked_at: Date | null; last_used: Date | null; spend: string }>(
    `SELECT k.id, k.name, k.prefix, k.created_at, k.revoked_at,
       (SELECT max(u.created_at) FROM usage_rows u WHERE u.account_id = k.account_id AND u.key_id = k.id) AS last_used,
       (SELECT coalesce(sum(u.amount_nano), 0)::text FROM usage_rows u WHERE u.account_id = k.account_id AND u.key_id = k.id AND u.id >= $2) AS spend
     FROM api_keys k WHERE k.account_id = $1 ORDER BY k.created_at DESC, k.id`,
    [accountId, usageIdFloor(monthStart(now))],
  );
  return rows.map((r) => ({
    id: r.id, name: r.name, prefix: r.prefix, createdAt: new Date(r.created_at), revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
    lastUsedAt: r.last_used ? new Date(r.last_used) : null, spendMonthNano: BigInt(r.spend),
  }));
}

/** One top-up. */
export interface TopupListing { id: string; amountNano: bigint; createdAt: Date }

/** The account's top-ups, newest first (at most `limit`). */
export async function listTopups(db: Db, accountId: string, limit = 100): Promise<TopupListing[]> {
  const rows = await db.query<{ id: string; amount_nano: string; created_at: Date }>(
    'SELECT id, amount_nano::text, created_at FROM topups WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [accountId, limit],
  );
  return rows.map((r) => ({ id: r.id, amountNano: BigInt(r.amount_nano), createdAt: new Date(r.created_at) }));
}

/**
 * The usage page's filters (each optional); `to` is inclusive of its whole day. `beforeId` is a
 * keyset cursor: only rows with a smaller id (older), for reading page after page.
 */
export interface UsageFilter { keyId?: string; model?: string; kind?: string; from?: Date; to?: Date; beforeId?: string }

/** The WHERE clause and parameters of a filter, for the account. */
function where(accountId: string, f: UsageFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [accountId];
  const clauses = ['account_id = $1'];
  const add = (clause: string, value: unknown): void => { params.push(value); clauses.push(clause.replace('?', `$${params.length}`)); };
  if (f.keyId) add('key_id = ?', f.keyId);
  if (f.model) add('model = ?', f.model);
  if (f.kind) add('kind = ?', f.kind);
  if (f.from) add('id >= ?', usageIdFloor(f.from));
  if (f.to) add('id < ?', usageIdFloor(new Date(f.to.getTime() + 86_400_000)));
  if (f.beforeId) add('id < ?', f.beforeId);
  return { sql: clauses.join(' AND '), params };
}

/** Usage rows under the filter, newest first (at most `limit`). */
export async function listUsageRows(db: Db, accountId: string, filter: UsageFilter, limit: number): Promise<UsageRow[]> {
  const { sql, params } = where(accountId, filter);
  const rows = await db.query<Parameters<typeof rowFrom>[0]>(`SELECT ${USAGE_COLUMNS} FROM usage_rows WHERE ${sql} ORDER BY id DESC LIMIT ${Math.floor(limit)}`, params);
  return rows.map(rowFrom);
}

/** Spend of one day, capability (usage row kind) and model: the chart's points. */
export interface DailySpend { day: string; kind: string; model: string; amountNano: bigint }

/** Daily totals under the filter (UTC days), oldest first. */
export async function dailySpend(db: Db, accountId: string, filter: UsageFilter): Promise<DailySpend[]> {
  const { sql, params } = where(accountId, filter);
  const rows = await db.query<{ day: string; kind: string; model: string; amount: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, kind, model, sum(amount_nano)::text AS amount
     FROM usage_rows WHERE ${sql} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, params,
  );
  return rows.map((r) => ({ day: r.day, kind: r.kind, model: r.model, amountNano: BigInt(r.amount) }));
}

/** The distinct models and capabilities the account has usage rows for (the filter's choices). */
export async function usageFacets(db: Db, accountId: string): Promise<{ models: string[]; kinds: string[] }> {
  const models = await db.query<{ v: string }>('SELECT DISTINCT model AS v FROM usage_rows WHERE account_id = $1 ORDER BY 1', [accountId]);
  const kinds = await db.query<{ v: string }>('SELECT DISTINCT kind AS v FROM usage_rows WHERE account_id = $1 ORDER BY 1', [accountId]);
  return { models: models.map((r) => r.v), kinds: kinds.map((r) => r.v) };
}
