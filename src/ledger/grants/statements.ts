/**
 * The grant statements (migration 013): the flush, whose commit the `post` setting chooses (deferred:
 * durable, posted behind the answer; immediate: the answer waits, so the commit need not wait for the
 * WAL flush), and the reclaim request another replica reads.
 */
import type { Statement } from '../../store/types.js';

const FLUSH_TEXT = 'SELECT grant_id, status, amount, available, reclaim, refused FROM ledger_grant_flush($1::jsonb)';

/** A flush whose commit waits for the WAL flush (post: deferred; an answer given is durable on its post). */
export const FLUSH_DURABLE: Statement = { name: 'ledger_grant_flush', commit: 'durable', text: FLUSH_TEXT };

/** A flush the answers wait for (post: immediate): committed without waiting for the WAL flush. */
export const FLUSH_ASYNC: Statement = { name: 'ledger_grant_flush', commit: 'async', text: FLUSH_TEXT };

/**
 * Asks every other replica holding a grant for account $1 to give its headroom back ($2: this
 * replica's owner id): flags their grants (read by their next flush) and notifies them at once.
 * Answers how many grants were flagged.
 */
export const RECLAIM_SQL = `WITH flagged AS (
  UPDATE holds SET reclaim = true
  WHERE account_id = $1 AND kind = 'grant' AND closed_at IS NULL AND owner IS DISTINCT FROM $2 AND amount_nano > 0
  RETURNING id)
SELECT (SELECT count(*) FROM flagged)::int AS flagged, pg_notify('gateway_grant_reclaim', $1) IS NOT NULL AS notified`;

/** Whether some other replica's grant for account $1 still waits to give its headroom back. */
export const RECLAIM_PENDING_SQL = `SELECT EXISTS (SELECT 1 FROM holds WHERE account_id = $1 AND kind = 'grant'
  AND closed_at IS NULL AND reclaim AND owner IS DISTINCT FROM $2) AS pending`;

/** The channel replicas listen on for reclaim requests (payload: the account id). */
export const RECLAIM_CHANNEL = 'gateway_grant_reclaim';
