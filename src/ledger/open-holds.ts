/**
 * An account's open holds as the admin API lists them (issue 30: `GET /admin/accounts/{id}/holds`
 * lists holds with their `kind`): each request's reserve, and each replica's credit grant.
 */
import type { Queryable } from '../store/types.js';
import { toBig } from './types.js';

/** One open hold. */
export interface OpenHold {
  id: string;
  /** `request`: one request's reserve; `grant`: a replica's credit grant (issue 30). */
  kind: 'request' | 'grant';
  amountNano: bigint;
  createdAt: Date;
  expiresAt: Date;
}

const OPEN_HOLDS = `SELECT id, kind, amount_nano::text AS amount, created_at, expires_at FROM holds
WHERE account_id = $1 AND closed_at IS NULL ORDER BY created_at, id LIMIT $2`;

/** The account's open holds, oldest first, at most `limit`. */
export async function listOpenHolds(q: Queryable, accountId: string, limit = 500): Promise<OpenHold[]> {
  const rows = await q.query<{ id: string; kind: OpenHold['kind']; amount: string; created_at: Date | string; expires_at: Date | string }>(OPEN_HOLDS, [accountId, limit]);
  return rows.map((r) => ({ id: r.id, kind: r.kind, amountNano: toBig(r.amount), createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at) }));
}
