/**
 * Holds: reserve before the upstream call, then settle (charge actual usage), release (charge
 * nothing) or let the sweeper expire it. Exactly one of settle/release/sweep gives a hold's amount
 * back: the one that closes it. Every movement runs in the database functions of migration 003,
 * batched by group commit (one round trip and one commit for the calls that arrive together); lock
 * order is always hold rows by id, then account rows by id.
 */
import type { Db } from '../store/db.js';
import { GroupCommit } from './group-commit.js';
import { sortableId } from './ids.js';
import { checkCharge, rowsOfHold } from './usage.js';
import { LedgerError, type UsageRow, type UsageRowInput } from './types.js';

/** A reservation to make. */
export interface ReserveInput { holdId: string; accountId: string; amountNano: bigint; ttlMs: number; }

/** A settlement: the hold, its account and the usage rows to charge. */
export interface SettleInput { holdId: string; accountId: string; rows: UsageRowInput[]; }

interface SettleItem { input: SettleInput; rows: UsageRow[]; }

interface SettleLine { hold: string; status: 'settled' | 'already_settled' | 'not_found'; charged_at: Date | string; }

/** Usage details as stored: bigints become decimal strings; values without one are returned as they are. */
function storedDetails(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value.map(storedDetails);
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  const entries = Object.entries(value);
  const converted = entries.map(([k, v]) => [k, storedDetails(v)] as const);
  return converted.every(([, v], i) => v === entries[i]![1]) ? value : Object.fromEntries(converted);
}

async function reserveBatch(db: Db, items: ReserveInput[]): Promise<boolean[]> {
  const payload = items.map((i) => ({ hold: i.holdId, account: i.accountId, amount: i.amountNano.toString(), ttl_ms: i.ttlMs }));
  const rows = await db.query<{ ledger_reserve: string }>('SELECT ledger_reserve FROM ledger_reserve($1::jsonb)', [JSON.stringify(payload)]);
  const reserved = new Set(rows.map((r) => r.ledger_reserve));
  return items.map((i) => reserved.has(i.holdId));
}

/** Per item: the rows charged, or the item's own refusal (a not_found is not a failure of its batch). */
async function settleBatch(db: Db, items: SettleItem[]): Promise<(UsageRow[] | LedgerError)[]> {
  const payload = items.map(({ input, rows }) => ({
    hold: input.holdId, account: input.accountId,
    rows: rows.map((r) => ({ id: r.id, request_id: r.requestId, model: r.model, kind: r.kind, quantity: r.quantity.toString(), unit: r.unit, amount: r.amountNano.toString(), details: r.details })),
  }));
  const lines = await db.query<SettleLine>('SELECT hold, status, charged_at FROM ledger_settle($1::jsonb)', [JSON.stringify(payload)]);
  return Promise.all(items.map(async ({ input, rows }, i) => {
    const line = lines[i]!;
    if (line.status === 'not_found') return new LedgerError('not_found', `hold ${input.holdId} not found for account ${input.accountId}`);
    if (line.status === 'already_settled') return rowsOfHold(db, input.holdId);
    const createdAt = line.charged_at instanceof Date ? line.charged_at : new Date(line.charged_at);
    return rows.map((r) => ({ ...r, createdAt }));
  }));
}

async function releaseBatch(db: Db, holdIds: string[], outcome: 'released' | 'expired'): Promise<number> {
  const rows = await db.query<{ n: number }>('SELECT ledger_release($1::text[], $2) AS n', [holdIds, outcome]);
  return Number(rows[0]?.n ?? 0);
}

/** Group-committed hold operations over one store. */
export class Holds {
  private readonly reserves: GroupCommit<ReserveInput, boolean>;
  private readonly settles: GroupCommit<SettleItem, UsageRow[] | LedgerError>;
  private readonly releases: GroupCommit<string, void>;

  constructor(private readonly db: Db) {
    this.reserves = new GroupCommit((items) => reserveBatch(db, items));
    this.settles = new GroupCommit((items) => settleBatch(db, items));
    this.releases = new GroupCommit<string, void>(async (ids) => { await releaseBatch(db, ids, 'released'); return ids.map(() => undefined); });
  }

  /** Reserves `amountNano` (>= 0) for at most `ttlMs`; false (nothing written) when it does not fit. */
  reserve(input: ReserveInput): Promise<boolean> {
    if (typeof input.amountNano !== 'bigint' || input.amountNano < 0n) {
      return Promise.reject(new LedgerError('invalid_amount', 'hold amount must be a bigint >= 0'));
    }
    if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) return Promise.reject(new RangeError('ttlMs must be a positive integer'));
    return this.reserves.submit(input);
  }

  /**
   * Closes the hold (giving it back if still open), appends the rows and charges their sum, atomically.
   * A hold already released or swept is still charged. A second settle of the same hold charges nothing
   * and returns the rows of the first.
   */
  async settle(input: SettleInput): Promise<UsageRow[]> {
    input.rows.forEach(checkCharge);
    const rows: UsageRow[] = input.rows.map((r) => ({
      ...r, details: storedDetails(r.details ?? {}) as Record<string, unknown>, id: sortableId('use_'), accountId: input.accountId, refundOf: null, createdAt: new Date(0),
    }));
    const result = await this.settles.submit({ input, rows });
    if (result instanceof LedgerError) throw result;
    return result;
  }

  /** Closes an open hold and gives its amount back; no usage row. Unknown or closed holds: no-op. */
  release(holdId: string): Promise<void> {
    return this.releases.submit(holdId);
  }

  /** Expires due holds in batches; a hold extended after it was picked is left open. Returns how many. */
  async sweepExpired(batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const due = await this.db.query<{ id: string }>(
        'SELECT id FROM holds WHERE closed_at IS NULL AND expires_at < now() ORDER BY expires_at LIMIT $1', [batch]);
      if (due.length > 0) total += await releaseBatch(this.db, due.map((d) => d.id), 'expired');
      if (due.length < batch) return total;
    }
  }

  /**
   * Pushes an open hold's expiry to `ttlMs` from now (a long stream stays reserved while it runs, so
   * the sweeper never releases a request still in flight). A closed or unknown hold is left alone.
   */
  async extend(holdId: string, ttlMs: number): Promise<boolean> {
    const rows = await this.db.query(`UPDATE holds SET expires_at = now() + ($2::bigint * interval '1 millisecond') WHERE id = $1 AND closed_at IS NULL RETURNING id`, [holdId, ttlMs]);
    return rows.length > 0;
  }
}
