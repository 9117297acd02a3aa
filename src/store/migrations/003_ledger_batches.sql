-- 003: money movements in batches (group commit). The gateway sends the reserves, settles and
-- releases that arrive while an earlier batch is in flight as one call, so N requests cost one round
-- trip and one commit instead of N (or 5N). Each function is one statement, hence one transaction.
--
-- Lock order, the same everywhere, so that batches, the sweeper and single calls can never deadlock:
-- hold rows first, by id; then account rows, by id. Reserves lock accounts only (their holds are new).
-- Every function is VOLATILE plpgsql: each statement inside sees rows committed before it started,
-- so once a row is locked it is read at its latest version.

-- Reserve: for each item, in the order given, one guarded debit (balance - amount >= -credit_limit)
-- and the hold, or nothing. Returns the ids that were reserved. A hold id that already exists is not
-- reserved again (the debit is given back in the same transaction).
CREATE FUNCTION ledger_reserve(p_items jsonb) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  PERFORM 1 FROM accounts
    WHERE id IN (SELECT DISTINCT x->>'account' FROM jsonb_array_elements(p_items) x)
    ORDER BY id FOR UPDATE;
  FOR r IN SELECT x->>'hold' AS hold, x->>'account' AS account, (x->>'amount')::bigint AS amount,
                  (x->>'ttl_ms')::bigint AS ttl_ms
           FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(x, n) ORDER BY n LOOP
    UPDATE accounts SET balance_nano = balance_nano - r.amount, held_nano = held_nano + r.amount
      WHERE id = r.account AND balance_nano - r.amount >= -credit_limit_nano;
    CONTINUE WHEN NOT FOUND;
    INSERT INTO holds (id, account_id, amount_nano, expires_at)
      VALUES (r.hold, r.account, r.amount, now() + r.ttl_ms * interval '1 millisecond')
      ON CONFLICT (id) DO NOTHING;
    IF FOUND THEN
      RETURN NEXT r.hold;
    ELSE
      UPDATE accounts SET balance_nano = balance_nano + r.amount, held_nano = held_nano - r.amount WHERE id = r.account;
    END IF;
  END LOOP;
END;
$$;

-- Settle: for each item, close the hold (giving back what it still held), append its usage rows and
-- charge their sum. Returns one line per item: 'settled', 'already_settled' (a second settle charges
-- nothing) or 'not_found' (no such hold for that account). A hold released or swept before its
-- settle is still charged: the work was done. `charged_at` is the transaction's time, which is also
-- the rows' created_at.
CREATE FUNCTION ledger_settle(p_items jsonb) RETURNS TABLE (hold text, status text, charged_at timestamptz) LANGUAGE plpgsql AS $$
DECLARE
  r record;
  h record;
  give_back bigint;
  total bigint;
BEGIN
  PERFORM 1 FROM holds
    WHERE id IN (SELECT x->>'hold' FROM jsonb_array_elements(p_items) x) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts
    WHERE id IN (SELECT DISTINCT x->>'account' FROM jsonb_array_elements(p_items) x) ORDER BY id FOR UPDATE;
  FOR r IN SELECT x->>'hold' AS hold_id, x->>'account' AS account, x->'rows' AS rows
           FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(x, n) ORDER BY n LOOP
    hold := r.hold_id;
    charged_at := now();
    SELECT account_id, amount_nano, closed_at, settled_at INTO h FROM holds WHERE id = r.hold_id;
    IF NOT FOUND OR h.account_id <> r.account THEN
      status := 'not_found';
    ELSIF h.settled_at IS NOT NULL THEN
      status := 'already_settled';
    ELSE
      give_back := CASE WHEN h.closed_at IS NULL THEN h.amount_nano ELSE 0 END;
      UPDATE holds SET settled_at = now(), closed_at = coalesce(closed_at, now()),
        outcome = coalesce(outcome, 'settled') WHERE id = r.hold_id;
      INSERT INTO usage_rows (id, account_id, hold_id, request_id, model, kind, quantity, unit, amount_nano, details)
        SELECT u.id, r.account, r.hold_id, u.request_id, u.model, u.kind, u.quantity::bigint, u.unit,
               u.amount::bigint, u.details
        FROM jsonb_to_recordset(r.rows) AS u(id text, request_id text, model text, kind text, quantity text,
                                             unit text, amount text, details jsonb);
      SELECT coalesce(sum((u->>'amount')::bigint), 0) INTO total FROM jsonb_array_elements(r.rows) u;
      UPDATE accounts SET balance_nano = balance_nano + give_back - total, held_nano = held_nano - give_back
        WHERE id = r.account;
      status := 'settled';
    END IF;
    RETURN NEXT;
  END LOOP;
END;
$$;

-- Release: close every given hold that is still open with `p_outcome` ('released' by a request that
-- charges nothing, 'expired' by the sweeper) and give its amount back. Closed or unknown holds are
-- left alone, and so is a hold given to the sweeper that was extended (a long stream) after the
-- sweeper picked it. Returns how many it closed.
CREATE FUNCTION ledger_release(p_holds text[], p_outcome text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  accts text[];
  amounts bigint[];
BEGIN
  PERFORM 1 FROM holds WHERE id = ANY (p_holds) AND closed_at IS NULL ORDER BY id FOR UPDATE;
  WITH c AS (
    UPDATE holds SET closed_at = now(), outcome = p_outcome
    WHERE id = ANY (p_holds) AND closed_at IS NULL AND (p_outcome <> 'expired' OR expires_at < now())
    RETURNING account_id, amount_nano
  )
  SELECT array_agg(account_id), array_agg(amount_nano) INTO accts, amounts FROM c;
  IF accts IS NULL THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM accounts WHERE id = ANY (accts) ORDER BY id FOR UPDATE;
  UPDATE accounts a SET balance_nano = a.balance_nano + p.amount, held_nano = a.held_nano - p.amount
    FROM (SELECT u.account_id, sum(u.amount)::bigint AS amount
          FROM unnest(accts, amounts) AS u(account_id, amount) GROUP BY u.account_id) p
    WHERE a.id = p.account_id;
  RETURN array_length(accts, 1);
END;
$$;
