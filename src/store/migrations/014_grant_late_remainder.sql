-- 014: a stream that outlives its swept grant is billed in full (issue 30's bound U). The sweeper
-- settles a lapsed grant's recorded checkpoint (migration 005); the stream may go on and finish, and its
-- replica then posts the final charge late (migration 013, status 'closed'). 013 skipped a late row
-- whose request already had rows on the grant, so everything delivered after the checkpoint went
-- unbilled, without bound. A late row is now posted for what it owes beyond what the grant already
-- holds for the same request, kind and unit (the checkpoint's part is not charged twice); a resend of
-- a flush that was applied owes nothing. ledger_grant_flush is 013's but for its waiting loop, which now
-- guards and posts exactly those owed rows.

-- The part of `p_rows` not on the grant yet: a request with no rows there whole; otherwise each row
-- less what the grant holds for the same request, kind and unit, where that leaves something owed.
CREATE OR REPLACE FUNCTION ledger_grant_unposted(p_grant text, p_rows jsonb) RETURNS jsonb LANGUAGE sql STABLE SET enable_seqscan = off AS $$
  WITH wanted AS (
    SELECT r, r->>'request_id' AS request_id, r->>'kind' AS kind, r->>'unit' AS unit FROM jsonb_array_elements(p_rows) r
  ), held AS (
    SELECT u.request_id, u.kind, u.unit, sum(u.quantity) AS quantity, sum(u.amount_nano) AS amount
    FROM usage_rows u WHERE u.hold_id = p_grant AND u.request_id IN (SELECT request_id FROM wanted)
    GROUP BY u.request_id, u.kind, u.unit
  )
  SELECT coalesce(jsonb_agg(CASE WHEN h.request_id IS NULL THEN w.r ELSE w.r || jsonb_build_object(
           'quantity', greatest((w.r->>'quantity')::numeric - h.quantity, 0)::text,
           'amount', ((w.r->>'amount')::numeric - h.amount)::text) END), '[]'::jsonb)
  FROM wanted w LEFT JOIN held h ON h.request_id = w.request_id AND h.kind = w.kind AND h.unit = w.unit
  WHERE NOT EXISTS (SELECT 1 FROM held x WHERE x.request_id = w.request_id) OR (w.r->>'amount')::numeric > coalesce(h.amount, 0);
$$;

CREATE OR REPLACE FUNCTION ledger_grant_flush(p jsonb) RETURNS TABLE (grant_id text, status text, amount bigint, available bigint, reclaim boolean, refused text[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  it record;
  h record;
  acct record;
  grant_ids text[] := ARRAY(SELECT x->>'grant' FROM jsonb_array_elements(p->'items') x);
  account_ids text[] := ARRAY(SELECT DISTINCT x->>'account' FROM jsonb_array_elements(p->'items') x);
  lease interval := (p->>'lease_ms')::bigint * interval '1 millisecond';
  fraction numeric := (p->>'fraction')::numeric;
  posted bigint;
  from_grant bigint;
  new_amount bigint;
  want bigint;
  cap bigint;
  refused_ids text[];
  w record;
BEGIN
  IF p->>'commit' = 'async' THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  PERFORM 1 FROM holds WHERE id = ANY (grant_ids) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id = ANY (account_ids) ORDER BY id FOR UPDATE;
  FOR it IN SELECT x->>'grant' AS grant_id, x->>'account' AS account, (x->>'seq')::bigint AS seq,
                   coalesce((x->>'open')::boolean, false) AS open, coalesce((x->>'close')::boolean, false) AS close,
                   coalesce((x->>'target')::bigint, 0) AS target, coalesce((x->>'min')::bigint, 0) AS min_amount,
                   coalesce((x->>'keep')::bigint, 0) AS keep, coalesce(x->'rows', '[]'::jsonb) AS rows,
                   coalesce(x->'waiting', '[]'::jsonb) AS waiting, x->'delivered' AS delivered
            FROM jsonb_array_elements(p->'items') x ORDER BY x->>'grant' LOOP
    SELECT * INTO h FROM holds WHERE id = it.grant_id AND account_id = it.account AND kind = 'grant';
    SELECT * INTO acct FROM accounts WHERE id = it.account;
    IF NOT FOUND THEN
      grant_id := it.grant_id; status := 'unknown'; amount := 0; available := 0; reclaim := false; refused := '{}';
      RETURN NEXT; CONTINUE;
    END IF;
    refused_ids := '{}';
    IF h.id IS NULL THEN
      -- Not there: open it (guarded, partly if need be), or say so.
      new_amount := least(it.target, floor((acct.balance_nano + acct.credit_limit_nano)::numeric * fraction)::bigint);
      IF it.open AND new_amount >= greatest(it.min_amount, 1) THEN
        INSERT INTO holds (id, account_id, amount_nano, expires_at, kind, owner, seq)
          VALUES (it.grant_id, it.account, new_amount, now() + lease, 'grant', p->>'owner', it.seq);
        UPDATE accounts SET balance_nano = balance_nano - new_amount, held_nano = held_nano + new_amount WHERE id = it.account;
        status := 'opened';
      ELSE
        new_amount := 0;
        status := CASE WHEN it.open THEN 'refused' ELSE 'unknown' END;
      END IF;
    ELSIF it.seq <= h.seq THEN
      -- Applied before: the answer of that flush was lost.
      new_amount := CASE WHEN h.closed_at IS NULL THEN h.amount_nano ELSE 0 END;
      status := 'duplicate';
    ELSIF h.closed_at IS NOT NULL THEN
      -- Swept (or closed) while this replica was away: post late what it answered; what waits only if it fits.
      posted := (SELECT coalesce(sum((r->>'amount')::bigint), 0) FROM jsonb_array_elements(ledger_grant_unposted(it.grant_id, it.rows)) r);
      PERFORM ledger_grant_append(it.grant_id, it.account, it.rows, true);
      FOR w IN SELECT r->>'request_id' AS request_id, jsonb_agg(r) AS rows, sum((r->>'amount')::bigint) AS total
               FROM jsonb_array_elements(ledger_grant_unposted(it.grant_id, it.waiting)) r GROUP BY 1 ORDER BY 1 LOOP
        -- w.rows are what each request still owes (its settled checkpoint off): guarded, posted as they are.
        IF acct.balance_nano - posted - w.total >= -acct.credit_limit_nano THEN
          PERFORM ledger_grant_append(it.grant_id, it.account, w.rows, false);
          posted := posted + w.total;
        ELSE
          refused_ids := refused_ids || w.request_id;
        END IF;
      END LOOP;
      UPDATE accounts SET balance_nano = balance_nano - posted WHERE id = it.account;
      UPDATE holds SET seq = it.seq WHERE id = it.grant_id;
      new_amount := 0;
      status := 'closed';
    ELSE
      -- Open: post from the grant, then renew, resize, record the streams in flight.
      posted := (SELECT coalesce(sum((r->>'amount')::bigint), 0) FROM jsonb_array_elements(it.rows || it.waiting) r);
      PERFORM ledger_grant_append(it.grant_id, it.account, it.rows || it.waiting, false);
      from_grant := least(posted, h.amount_nano);
      new_amount := h.amount_nano - from_grant;
      UPDATE accounts SET balance_nano = balance_nano - (posted - from_grant), held_nano = held_nano - from_grant
        WHERE id = it.account RETURNING * INTO acct;
      IF it.close THEN
        want := 0;
      ELSE
        -- Growing is capped by the fraction of what is available, and is a guarded debit (at most what
        -- the credit limit lets through). Shrinking goes no lower than the size the book asked for
        -- (it admits against the smaller of the two while this flush is in flight), nor below `keep`.
        cap := floor((acct.balance_nano + acct.credit_limit_nano + new_amount)::numeric * fraction)::bigint;
        want := least(it.target, cap, new_amount + greatest(acct.balance_nano + acct.credit_limit_nano, 0));
        want := greatest(want, least(it.target, new_amount), least(it.keep, new_amount));
      END IF;
      UPDATE accounts SET balance_nano = balance_nano - (want - new_amount), held_nano = held_nano + (want - new_amount)
        WHERE id = it.account;
      UPDATE holds SET amount_nano = want, seq = it.seq, reclaim = false,
                       delivered = CASE WHEN it.close OR coalesce(jsonb_array_length(it.delivered), 0) = 0 THEN NULL ELSE it.delivered END,
                       expires_at = CASE WHEN it.close THEN expires_at ELSE now() + lease END,
                       closed_at = CASE WHEN it.close THEN now() END,
                       outcome = CASE WHEN it.close THEN 'released' END
        WHERE id = it.grant_id;
      new_amount := CASE WHEN it.close THEN 0 ELSE want END;
      status := 'ok';
    END IF;
    SELECT a.balance_nano + a.credit_limit_nano INTO available FROM accounts a WHERE a.id = it.account;
    grant_id := it.grant_id; amount := new_amount; reclaim := coalesce(h.reclaim, false); refused := refused_ids;
    RETURN NEXT;
  END LOOP;
END;
$$;
