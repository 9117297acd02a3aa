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
import { checkCharge, rowsOfHold, storedDetails } from './usage.js';
import { LedgerError, type UsageRow, type UsageRowInput } from './types.js';

/** A reservation to make. */
export interface ReserveInput { holdId: string; accountId: string; amountNano: bigint; ttlMs: number; }

/** A settlement: the hold, its account and the usage rows to charge. */
export interface SettleInput { holdId: string; accountId: string; rows: UsageRowInput[]; }

/** One hold operation waiting for its batch. */
type HoldOp =
  | { kind: 'reserve'; input: ReserveInput }
  | { kind: 'settle'; input: SettleInput; rows: UsageRow[] }
  | { kind: 'release'; holdId: string };

/** Per operation: reserved or not, the settled rows (or the settle's own failure), or nothing. */
type HoldResult = boolean | UsageRow[] | Error | undefined;

/** A line of ledger_batch: the item's kind and position (1-based) in its list, and what became of it. */
interface BatchLine { kind: 'settle' | 'reserve'; n: string | number; status: 'settled' | 'already_settled' | 'not_found' | 'reserved'; charged_at: Date | string; }

function settlePayload(op: Extract<HoldOp, { kind: 'settle' }>): unknown {
  return {
    hold: op.input.holdId, account: op.input.accountId,
    rows: op.rows.map((r) => ({ id: r.id, request_id: r.requestId, model: r.model, kind: r.kind, quantity: r.quantity.toString(), unit: r.unit, amount: r.amountNano.toString(), details: r.details })),
  };
}

/**
 * Sends one batch through ledger_batch (migration 003): settles, releases, then reserves, in one
 * transaction. It rejects only when that call fails (the transaction rolled back, so the batch may be
 * retried); what goes wrong for one settle after the commit is that settle's own answer.
 */
async function runBatch(db: Db, ops: HoldOp[]): Promise<HoldResult[]> {
  const batch = {
    settle: ops.flatMap((op) => (op.kind === 'settle' ? [settlePayload(op)] : [])),
    release: ops.flatMap((op) => (op.kind === 'release' ? [op.holdId] : [])),
    reserve: ops.flatMap((op) => (op.kind === 'reserve' ? [{ hold: op.input.holdId, account: op.input.accountId, amount: op.input.amountNano.toString(), ttl_ms: op.input.ttlMs }] : [])),
  };
  const lines = await db.query<BatchLine>('SELECT kind, n, status, charged_at FROM ledger_batch($1::jsonb)', [JSON.stringify(batch)]);
  const settled = new Map(lines.filter((l) => l.kind === 'settle').map((l) => [Number(l.n), l]));
  const reserved = new Set(lines.filter((l) => l.kind === 'reserve').map((l) => Number(l.n)));
  let settles = 0;
  let reserves = 0;
  return Promise.all(ops.map(async (op): Promise<HoldResult> => {
    if (op.kind === 'reserve') return reserved.has(++reserves);
    if (op.kind === 'release') return undefined;
    const line = settled.get(++settles);
    if (!line) return new Error(`ledger_batch returned no line for settle ${settles}`);
    if (line.status === 'not_found') return new LedgerError('not_found', `hold ${op.input.holdId} not found for account ${op.input.accountId}`);
    if (line.status === 'already_settled') return rowsOfHold(db, op.input.holdId).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    const createdAt = line.charged_at instanceof Date ? line.charged_at : new Date(line.charged_at);
    return op.rows.map((r) => ({ ...r, createdAt }));
  }));
}

/** Expires the given holds that are still open and still due; returns how many. */
async function expireHolds(db: Db, holdIds: string[]): Promise<number> {
  const rows = await db.query<{ n: number }>("SELECT ledger_release($1::text[], 'expired') AS n", [holdIds]);
  return Number(rows[0]?.n ?? 0);
}

/** Group-committed hold operations over one store. */
export class Holds {
  private readonly batches: GroupCommit<HoldOp, HoldResult>;

  constructor(private readonly db: Db) {
    this.batches = new GroupCommit((ops) => runBatch(db, ops));
  }

  /** Reserves `amountNano` (>= 0) for at most `ttlMs`; false (nothing written) when it does not fit. */
  reserve(input: ReserveInput): Promise<boolean> {
    if (typeof input.amountNano !== 'bigint' || input.amountNano < 0n) {
      return Promise.reject(new LedgerError('invalid_amount', 'hold amount must be a bigint >= 0'));
    }
    if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) return Promise.reject(new RangeError('ttlMs must be a positive integer'));
    return this.batches.submit({ kind: 'reserve', input }) as Promise<boolean>;
  }

  /**
   * Closes the hold (giving it back if still open), appends the rows and charges their sum, atomically.
   * A hold already released or swept is still charged. A second settle of the same hold charges nothing
   * and returns the rows of the first.
   */
  async settle(input: SettleInput): Promise<UsageRow[]> {
    input.rows.forEach(checkCharge);
    const rows: UsageRow[] = input.rows.map((r) => ({
      ...r, details: storedDetails(r.details), id: sortableId('use_'), accountId: input.accountId, refundOf: null, createdAt: new Date(0),
    }));
    const result = await this.batches.submit({ kind: 'settle', input, rows });
    if (result instanceof Error) throw result;
    return result as UsageRow[];
  }

  /** Closes an open hold and gives its amount back; no usage row. Unknown or closed holds: no-op. */
  async release(holdId: string): Promise<void> {
    await this.batches.submit({ kind: 'release', holdId });
  }

  /** Expires due holds in batches; a hold extended after it was picked is left open. Returns how many. */
  async sweepExpired(batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const due = await this.db.query<{ id: string }>(
        'SELECT id FROM holds WHERE closed_at IS NULL AND expires_at < now() ORDER BY expires_at LIMIT $1', [batch]);
      if (due.length > 0) total += await expireHolds(this.db, due.map((d) => d.id));
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
