-- 005: delivered work is billed even across a crash (issue 8 item 5). While a stream runs, the
-- keep-alive that extends its hold also records on the hold the usage rows of what has been delivered
-- so far (`delivered`, the same payload a settle carries). The request's own settle ignores it and
-- charges the final usage. If the process dies before that settle, the sweeper settles the recorded
-- rows when the hold expires and gives the rest back, so the client pays for what it received up to the
-- last checkpoint, not nothing.
ALTER TABLE holds ADD COLUMN delivered jsonb;

-- The sweeper's entry point (replaces ledger_release(ids, 'expired') for expiry). For the given holds
-- that are still open, still due and not settled: those with delivered rows are settled with them
-- (through ledger_settle, so exactly as a request's settle: rows appended, their sum charged, the hold
-- given back, `settled_at` set, so a late settle of the same hold charges nothing); every other one is
-- expired (given back, no row). A hold extended after the sweeper picked it is no longer due and is
-- left alone. Lock order as everywhere: hold rows by id, then account rows by id. Returns how many
-- holds it closed.
CREATE FUNCTION ledger_expire(p_holds text[]) RETURNS integer LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  items jsonb;
  account_ids text[];
  settled integer := 0;
BEGIN
  PERFORM 1 FROM holds WHERE id = ANY (p_holds) AND closed_at IS NULL ORDER BY id FOR UPDATE;
  SELECT jsonb_agg(jsonb_build_object('hold', h.id, 'account', h.account_id, 'rows', h.delivered) ORDER BY h.id),
         array_agg(DISTINCT h.account_id)
    INTO items, account_ids
    FROM holds h
    WHERE h.id = ANY (p_holds) AND h.closed_at IS NULL AND h.settled_at IS NULL AND h.expires_at < now()
      AND h.delivered IS NOT NULL AND jsonb_array_length(h.delivered) > 0;
  IF items IS NOT NULL THEN
    PERFORM 1 FROM accounts WHERE id = ANY (account_ids) ORDER BY id FOR UPDATE;
    SELECT count(*) INTO settled FROM ledger_settle(items) s WHERE s.status = 'settled';
  END IF;
  RETURN settled + ledger_release(p_holds, 'expired');
END;
$$;
