-- 012: usage rows carry the deployment that served them (issue 29 item 7: "Usage rows carry
-- `deployment` (the admin usage API and the console's CSV show it)"). A deployment is one source of an
-- offering (issue 29 item 1): its id is `<provider>/<upstream_model>` unless the operator names it.
--
-- deployment is nullable and has no foreign key, as key_id (migration 004):
--   * rows written before this migration have none recorded, and stay NULL (usage_rows is
--     append-only, so they are never backfilled);
--   * a refund row copies the deployment of the row it refunds, as it copies key_id;
--   * a row not written through a deployment (the ledger API called directly) is NULL.
-- No foreign key: deployments live in the configuration, not in the store, and one removed from the
-- configuration still names, on the rows it served, where those requests went.
-- No index: rows are listed by account (and key), never by deployment.
ALTER TABLE usage_rows ADD COLUMN deployment text;

-- ledger_settle as in 004, except that each row of the payload also carries its `deployment` (absent
-- or null: NULL). Same signature and result, so ledger_batch and ledger_expire, which call it by name,
-- are unchanged; a hold's delivered checkpoint (migration 005) has the same row shape, so the sweeper
-- stores the deployment too (a checkpoint recorded before this migration has none: NULL).
--
-- Settle: for each item, close the hold (giving back what it still held), append its usage rows and
-- charge their sum. Returns one line per item, in order: 'settled', 'already_settled' (a second
-- settle, in an earlier call or earlier in this batch, charges nothing) or 'not_found' (no such hold
-- for that account), with the item's position (1-based). A hold released or swept before its settle
-- is still charged: the work was done. `charged_at` is the transaction's time, which is also the
-- rows' created_at. Set-based: one statement reads every hold as it was, closes them, appends the
-- rows and moves each account's money in one update. Called by ledger_batch and ledger_expire
-- (migration 005), which have already locked the holds and the accounts (the statement's read of a
-- hold must not race a release).
CREATE OR REPLACE FUNCTION ledger_settle(p_items jsonb) RETURNS TABLE (n bigint, status text, charged_at timestamptz) LANGUAGE plpgsql AS $$
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
    INSERT INTO usage_rows (id, account_id, hold_id, request_id, model, kind, quantity, unit, amount_nano, details, key_id, deployment)
    SELECT u.id, s.account, s.hold_id, u.request_id, u.model, u.kind, u.quantity::bigint, u.unit, u.amount::bigint, u.details, u.key_id, u.deployment
    FROM settling s, jsonb_to_recordset(s.rows) AS u(id text, request_id text, model text, kind text,
                                                     quantity text, unit text, amount text, details jsonb, key_id text,
                                                     deployment text)
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

-- CREATE OR REPLACE assigns every property the command names or implies, so the SET of migration 011
-- would be dropped: set it again (the function never plans a sequential scan).
ALTER FUNCTION ledger_settle(jsonb) SET enable_seqscan = off;
