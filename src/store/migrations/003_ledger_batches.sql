-- 003: money movements in batches (group commit). The gateway sends the reserves, settles and
-- releases that arrive together as one call of ledger_batch, so N requests cost one round trip and
-- one commit instead of N (or 5N). Each call is one statement, hence one transaction.
--
-- Lock order, the same everywhere, so that batches, the sweeper and single calls can never deadlock:
-- hold rows first, by id; then account rows, by id. Reserves lock accounts only (their holds are new).
-- Every function is VOLATILE plpgsql: each statement inside sees rows committed before it started,
-- so once a row is locked it is read at its latest version.
--
-- Every lookup of holds or accounts goes through `id = ANY (array)`, which the planner answers from
-- the primary key: `id IN (SELECT ... FROM jsonb_array_elements(...))` was planned as a hash join
-- over a sequential scan, a cost that grows with the table (measured: 3 ms per call at 9,000 holds).
-- The entry points run with generic plans: their statements are the same every call, and planning
-- them anew for each call's values (custom plans) cost more than executing them (measured: a
-- one-item batch 0.99 ms with custom plans, 0.67 ms generic, a bare round trip being 0.17 ms).

-- Reserve: for each item, in the order given, one guarded debit (balance - amount >= -credit_limit)
-- and the hold, or nothing. Returns the positions (1-based) of the items reserved. A hold id that
-- already exists, or came earlier in the same batch, is not reserved again (the debit is given back
-- in the same transaction). When every account of the batch can cover all of its items and every
-- id is new (the usual case) that is two set-based statements; otherwise the items are taken one
-- by one, so that a request that does not fit never blocks one after it that does. Called by
-- ledger_batch only, which has already locked the accounts.
CREATE FUNCTION ledger_reserve(p_items jsonb) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE
  r record;
  hold_ids text[] := ARRAY(SELECT DISTINCT x->>'hold' FROM jsonb_array_elements(p_items) x);
  account_ids text[];
  totals bigint[];
  everything_fits boolean;
BEGIN
  -- Per account, what the whole batch asks of it.
  SELECT array_agg(account), array_agg(total) INTO account_ids, totals
    FROM (SELECT x->>'account' AS account, sum((x->>'amount')::bigint) AS total
          FROM jsonb_array_elements(p_items) x GROUP BY 1) p;
  SELECT coalesce(bool_and(coalesce(
           (SELECT a.balance_nano - t.total >= -a.credit_limit_nano FROM accounts a WHERE a.id = t.account), false)), false)
    INTO everything_fits
    FROM unnest(account_ids, totals) AS t(account, total);
  IF everything_fits AND cardinality(hold_ids) = jsonb_array_length(p_items)
     AND NOT EXISTS (SELECT 1 FROM holds WHERE id = ANY (hold_ids)) THEN
    UPDATE accounts a SET balance_nano = a.balance_nano - t.total, held_nano = a.held_nano + t.total
      FROM unnest(account_ids, totals) AS t(account, total)
      WHERE a.id = ANY (account_ids) AND a.id = t.account;
    INSERT INTO holds (id, account_id, amount_nano, expires_at)
      SELECT x->>'hold', x->>'account', (x->>'amount')::bigint, now() + (x->>'ttl_ms')::bigint * interval '1 millisecond'
      FROM jsonb_array_elements(p_items) x;
    RETURN QUERY SELECT generate_series(1, jsonb_array_length(p_items)::bigint);
    RETURN;
  END IF;
  FOR r IN SELECT x->>'hold' AS hold, x->>'account' AS account, (x->>'amount')::bigint AS amount,
                  (x->>'ttl_ms')::bigint AS ttl_ms, n
           FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(x, n) ORDER BY n LOOP
    UPDATE accounts SET balance_nano = balance_nano - r.amount, held_nano = held_nano + r.amount
      WHERE id = r.account AND balance_nano - r.amount >= -credit_limit_nano;
    CONTINUE WHEN NOT FOUND;
    INSERT INTO holds (id, account_id, amount_nano, expires_at)
      VALUES (r.hold, r.account, r.amount, now() + r.ttl_ms * interval '1 millisecond')
      ON CONFLICT (id) DO NOTHING;
    IF FOUND THEN
      RETURN NEXT r.n;
    ELSE
      UPDATE accounts SET balance_nano = balance_nano + r.amount, held_nano = held_nano - r.amount WHERE id = r.account;
    END IF;
  END LOOP;
END;
$$;

-- Settle: for each item, close the hold (giving back what it still held), append its usage rows and
-- charge their sum. Returns one line per item, in order: 'settled', 'already_settled' (a second
-- settle, in an earlier call or earlier in this batch, charges nothing) or 'not_found' (no such hold
-- for that account), with the item's position (1-based). A hold released or swept before its settle
-- is still charged: the work was done. `charged_at` is the transaction's time, which is also the
-- rows' created_at. Set-based: one statement reads every hold as it was, closes them, appends the
-- rows and moves each account's money in one update. Called by ledger_batch only, which has already
-- locked the holds and the accounts (the statement's read of a hold must not race a release).
CREATE FUNCTION ledger_settle(p_items jsonb) RETURNS TABLE (n bigint, status text, charged_at timestamptz) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  hold_ids text[] := ARRAY(SELECT x->>'hold' FROM jsonb_array_elements(p_items) x);
  account_ids text[] := ARRAY(SELECT DISTINCT x->>'account' FROM jsonb_array_elements(p_items) x);
BEGIN
  RETURN QUERY
  WITH input AS (
    SELECT x->>'hold' AS hold_id, x->>'account' AS account, x->'rows' AS rows, t.n
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(x, n)
  ), before_settle AS (
    SELECT h.id, h.account_id, h.amount_nano, h.closed_at, h.settled_at FROM holds h WHERE h.id = ANY (hold_ids)
  ), settling AS (
    -- The first settle of each hold not yet settled; the hold as it was before this statement.
    SELECT DISTINCT ON (i.hold_id) i.hold_id, i.account, i.rows, i.n,
           CASE WHEN h.closed_at IS NULL THEN h.amount_nano ELSE 0 END AS give_back,
           (SELECT coalesce(sum((r->>'amount')::bigint), 0) FROM jsonb_array_elements(i.rows) r) AS total
    FROM input i JOIN before_settle h ON h.id = i.hold_id AND h.account_id = i.account AND h.settled_at IS NULL
    ORDER BY i.hold_id, i.n
  ), closed AS (
    UPDATE holds h SET settled_at = now(), closed_at = coalesce(h.closed_at, now()),
      outcome = coalesce(h.outcome, 'settled')
    FROM settling s WHERE h.id = ANY (hold_ids) AND h.id = s.hold_id
  ), appended AS (
    INSERT INTO usage_rows (id, account_id, hold_id, request_id, model, kind, quantity, unit, amount_nano, details)
    SELECT u.id, s.account, s.hold_id, u.request_id, u.model, u.kind, u.quantity::bigint, u.unit, u.amount::bigint, u.details
    FROM settling s, jsonb_to_recordset(s.rows) AS u(id text, request_id text, model text, kind text,
                                                     quantity text, unit text, amount text, details jsonb)
  ), charged AS (
    UPDATE accounts a SET balance_nano = a.balance_nano + m.give_back - m.total, held_nano = a.held_nano - m.give_back
    FROM (SELECT account, sum(give_back)::bigint AS give_back, sum(total)::bigint AS total FROM settling GROUP BY account) m
    WHERE a.id = ANY (account_ids) AND a.id = m.account
  )
  SELECT i.n,
         CASE WHEN s.n = i.n THEN 'settled'
              WHEN EXISTS (SELECT 1 FROM before_settle h WHERE h.id = i.hold_id AND h.account_id = i.account) THEN 'already_settled'
              ELSE 'not_found' END,
         now()
  FROM input i LEFT JOIN settling s ON s.hold_id = i.hold_id
  ORDER BY i.n;
END;
$$;

-- Release: close every given hold that is still open with `p_outcome` ('released' by a request that
-- charges nothing, 'expired' by the sweeper) and give its amount back. Closed or unknown holds are
-- left alone, and so is a hold given to the sweeper that was extended (a long stream) after the
-- sweeper picked it. Returns how many it closed.
CREATE FUNCTION ledger_release(p_holds text[], p_outcome text) RETURNS integer LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
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
    WHERE a.id = ANY (accts) AND a.id = p.account_id;
  RETURN array_length(accts, 1);
END;
$$;

-- One batch of everything that arrived together: settles, then releases, then reserves (money given
-- back first), in one transaction: one round trip, one commit and one lock of each account row for
-- all of them. Every lock is taken up front in the global order (hold rows by id, then account rows
-- by id); ledger_reserve and ledger_settle rely on them, ledger_release (also the sweeper's) finds
-- its rows already locked. Returns the settle lines as
-- ledger_settle does (kind 'settle') and one line per reserved item (kind 'reserve'), each with the
-- item's position (1-based) in its list.
CREATE FUNCTION ledger_batch(p_batch jsonb) RETURNS TABLE (kind text, n bigint, status text, charged_at timestamptz) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  released text[] := ARRAY(SELECT jsonb_array_elements_text(p_batch->'release'));
  hold_ids text[] := ARRAY(SELECT x->>'hold' FROM jsonb_array_elements(p_batch->'settle') x) || released;
  account_ids text[];
BEGIN
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
