-- 006: a batch of reserves and releases commits without waiting for its WAL flush (issue 8, Latency:
-- "a reserve or a release may commit without waiting for the WAL flush (synchronous_commit = off on
-- those transactions: a hold lost in a database crash is a released hold, which is what the sweeper
-- would do), but it must stay atomic and visible to every replica before the upstream call; a settle
-- stays durable before the answer completes; no overspend, no double charge").
--
-- ledger_batch is redefined exactly as in 003, except that a batch without a settle first sets
-- synchronous_commit to off for its own transaction (set_config(..., true): transaction-local, and
-- not undone when the function returns, since the function's SET clause names another setting; the
-- gateway calls ledger_batch alone in an autocommit statement, so that transaction is the batch).
-- Why each part of the rule still holds:
-- - Atomic: synchronous_commit changes when the commit is acknowledged, not what it contains; the batch
--   still commits or rolls back as a whole.
-- - Visible before the upstream call: a commit is visible to every other session of the server (every
--   gateway process sharing the database) as soon as it returns, flushed or not; the reserve's answer
--   comes after that. The gateway reads and writes money on the primary only.
-- - A settle stays durable: a batch with a settle keeps the server's setting (on). Its commit flushes
--   the WAL up to its own commit record, which comes after the reserve of the same hold, so a durable
--   settle also makes every earlier reserve and release durable.
-- - A crash loses at most the last moments of unflushed reserves and releases (wal_writer_delay x 3):
--   a lost reserve is a hold that never was (nothing debited; its settle finds no hold and charges
--   nothing), a lost release a hold still open, which the sweeper gives back when it expires. Neither
--   spends money that is not there, nor charges twice.
CREATE OR REPLACE FUNCTION ledger_batch(p_batch jsonb) RETURNS TABLE (kind text, n bigint, status text, charged_at timestamptz) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  released text[] := ARRAY(SELECT jsonb_array_elements_text(p_batch->'release'));
  hold_ids text[] := ARRAY(SELECT x->>'hold' FROM jsonb_array_elements(p_batch->'settle') x) || released;
  account_ids text[];
BEGIN
  IF coalesce(jsonb_array_length(p_batch->'settle'), 0) = 0 THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  PERFORM 1 FROM holds WHERE id = ANY (hold_ids) ORDER BY id FOR UPDATE;
  account_ids := ARRAY(SELECT x->>'account' FROM jsonb_array_elements(p_batch->'settle') x
                       UNION SELECT x->>'account' FROM jsonb_array_elements(p_batch->'reserve') x
                       UNION SELECT h.account_id FROM holds h WHERE h.id = ANY (released));
  PERFORM 1 FROM accounts WHERE id = ANY (account_ids) ORDER BY id FOR UPDATE;
  IF jsonb_array_length(p_batch->'settle') > 0 THEN
    RETURN QUERY SELECT 'settle'::text, s.n, s.status, s.charged_at FROM ledger_settle(p_batch->'settle') s;
  END IF;
  IF cardinality(released) > 0 THEN
    PERFORM ledger_release(released, 'released');
  END IF;
  IF jsonb_array_length(p_batch->'reserve') > 0 THEN
    RETURN QUERY SELECT 'reserve'::text, r.n, 'reserved'::text, now() FROM ledger_reserve(p_batch->'reserve') AS r(n);
  END IF;
END;
$$;
