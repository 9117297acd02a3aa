/**
 * Operation ids (spec 4.6 rules 2 and 6; DESIGN.md "Idempotency"): an id is claimed with one insert
 * before anything is reserved and is single-use forever for its account, whatever the payload. The
 * same insert enforces one pending execution per account (a partial unique index) and the rolling
 * limit of completed executions (counted in its WHERE clause).
 */
import { GatewayError } from '../errors.js';
import { sqlState } from '../store/db.js';
import type { Queryable } from '../store/types.js';

/** How an operation ended: completed (billed and published), failed (nothing billed), recovery_required (uncertain). */
export type OperationEnd = 'completed' | 'failed' | 'recovery_required';

/** What a claim needs. */
export interface Claim {
  accountId: string;
  operationId: string;
  kind: string;
  requestId: string;
  now: Date;
  /** Completed operations of this kind allowed per `windowMs`. */
  maxCompleted: number;
  windowMs: number;
}

const UNIQUE_VIOLATION = '23505';

/** The 409 for an operation id already used; recovery state keeps its own code (spec 4.6 rule 6). */
function reusedError(state: string): GatewayError {
  const headers = { 'x-should-retry': 'false' };
  if (state === 'recovery_required') {
    return new GatewayError('execution_recovery_required', 'This execution is in an uncertain billing state: do not retry or continue it, not even with a new operation id; contact support with its request id.', { headers });
  }
  return new GatewayError('operation_id_reused', 'This X-Gateway-Operation-ID was already used; an operation id never dispatches twice, even with a changed payload.', { headers });
}

/** Claims the id (state pending), or throws the refusal: reused, one pending already, or the rolling limit. */
export async function claimOperation(db: Queryable, c: Claim): Promise<void> {
  let claimed: unknown[];
  try {
    claimed = await db.query(
      `INSERT INTO operations (account_id, operation_id, kind, request_id, state, created_at)
       SELECT $1, $2, $3, $4, 'pending', $5
       WHERE (SELECT count(*) FROM operations WHERE account_id = $1 AND kind = $3 AND state = 'completed' AND finished_at > $6) < $7
       ON CONFLICT (account_id, operation_id) DO NOTHING
       RETURNING operation_id`,
      [c.accountId, c.operationId, c.kind, c.requestId, c.now, new Date(c.now.getTime() - c.windowMs), c.maxCompleted]);
  } catch (error) {
    // The other unique index: one pending execution per account (spec 4.6 rule 2).
    if (sqlState(error) === UNIQUE_VIOLATION) throw new GatewayError('skill_execution_pending', 'Another skills execution of this account is still pending; wait for it to finish.');
    throw error;
  }
  if (claimed.length === 1) return;
  const [existing] = await db.query<{ state: string }>('SELECT state FROM operations WHERE account_id = $1 AND operation_id = $2', [c.accountId, c.operationId]);
  if (existing) throw reusedError(existing.state);
  const [oldest] = await db.query<{ finished_at: Date | string }>(
    `SELECT finished_at FROM operations WHERE account_id = $1 AND kind = $2 AND state = 'completed' AND finished_at > $3 ORDER BY finished_at LIMIT 1`,
    [c.accountId, c.kind, new Date(c.now.getTime() - c.windowMs)]);
  const wait = oldest ? Math.max(1, Math.ceil((new Date(oldest.finished_at).getTime() + c.windowMs - c.now.getTime()) / 1000)) : 60;
  throw new GatewayError('rate_limited', `At most ${c.maxCompleted} skills executions complete per rolling ${c.windowMs / 3_600_000} hours; the next is possible in ${wait} s.`, { headers: { 'retry-after': String(wait) } });
}

/** Ends a pending operation once (a second call changes nothing). */
export async function finishOperation(db: Queryable, accountId: string, operationId: string, end: OperationEnd, at: Date, result: unknown = null): Promise<void> {
  await db.query(
    `UPDATE operations SET state = $3, finished_at = $4, result = $5 WHERE account_id = $1 AND operation_id = $2 AND state = 'pending'`,
    [accountId, operationId, end, at, result === null ? null : JSON.stringify(result)]);
}

/**
 * Gives a claim back when its request was refused before anything was dispatched (402, 429, a store
 * outage at admission): the id never ran, so the client may send it again. Only the claiming request's
 * own pending row is removed.
 */
export async function releaseOperation(db: Queryable, accountId: string, operationId: string, requestId: string): Promise<void> {
  await db.query(`DELETE FROM operations WHERE account_id = $1 AND operation_id = $2 AND request_id = $3 AND state = 'pending'`, [accountId, operationId, requestId]);
}
