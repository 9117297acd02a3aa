-- 013: credit grants (issue 30). A replica takes a grant for an account: an ordinary hold, of kind
-- 'grant', debited from the balance by a guarded statement like a reserve, and admits requests against
-- it in memory. Its flusher posts their charges in batches through ledger_grant_flush, which in the
-- same statement renews the grant's lease, resizes it and records the delivered usage of the streams
-- it still runs. The sweeper closes an expired grant exactly as an expired hold (ledger_expire,
-- migration 005): its recorded delivered rows are settled, the rest given back. The reconciliation is
-- unchanged: an open grant is an open hold, and each posted charge moves from the grant's amount to a
-- usage row (opening + topups - balance == usage - refunds + open holds, at every commit).
--
--   kind    'request' (a reserve: one request's quote) or 'grant'.
--   owner   the replica holding the grant (a random id per process); reclaim requests skip their own.
--   seq     the sequence number of the last flush applied: a flush is applied once, and one whose
--           answer was lost is sent again with the same number and answered 'duplicate'.
--   reclaim set by another replica that is about to answer 402 (issue 30: "asks the others to give
--           back unspent grants"); the owner's next flush gives the headroom back and clears it.
ALTER TABLE holds ADD COLUMN kind text NOT NULL DEFAULT 'request' CHECK (kind IN ('request', 'grant'));
ALTER TABLE holds ADD COLUMN owner text;
ALTER TABLE holds ADD COLUMN seq bigint NOT NULL DEFAULT 0;
ALTER TABLE holds ADD COLUMN reclaim boolean NOT NULL DEFAULT false;
CREATE INDEX holds_open_grants ON holds (account_id) WHERE closed_at IS NULL AND kind = 'grant';

-- One flush of one replica: an item per grant with something to say, each applied once by its
-- sequence number. p: {owner, lease_ms, fraction, items: [{grant, account, seq, open, target, min,
-- keep, close, rows, waiting, delivered}]}, rows and waiting as ledger_settle reads them.
--   open     the grant does not exist yet: created with min(target, fraction x available), or not at
--            all when that is below `min` (status 'refused').
--   rows     charges already answered: posted from the grant (a charge the grant no longer covers is
--            taken from the balance). If the grant is closed (swept while its replica was cut off)
--            they are posted late, unguarded: the bound U of the issue; a request whose rows are
--            already on the grant (its delivered checkpoint, settled by the sweeper) is skipped.
--   waiting  charges of answers that wait for this flush (over U, or post: immediate): posted as rows
--            while the grant is open; after it closed, each request only if the balance covers it
--            (guarded), the others listed in `refused` (their answers are not given, nothing charged).
--   keep     what the grant must keep for requests still in flight; `target` the size wanted. A
--            grant grows toward target by at most what fraction x available and the credit limit let
--            through (it may fit only partly), and shrinks to target, never below keep. A reclaim
--            flag is answered (and cleared): the book then asks for a target of 0.
--   close    the grant is given back whole after its rows are posted (nothing is in flight).
--   delivered the usage rows of the streams in flight, replacing the previous record.
-- Answers a line per item: status ('ok', 'opened', 'refused', 'duplicate', 'closed', 'unknown'), the
-- grant's amount after, the account's available money (balance + credit limit), whether a reclaim was
-- asked, and the refused requests. Lock order as everywhere: holds by id, then accounts by id.
CREATE FUNCTION ledger_grant_flush(p jsonb) RETURNS TABLE (grant_id text, status text, amount bigint, available bigint, reclaim boolean, refused text[])
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
               FROM jsonb_array_elements(it.waiting) r GROUP BY 1 ORDER BY 1 LOOP
        IF jsonb_array_length(ledger_grant_unposted(it.grant_id, w.rows)) = 0 THEN
          CONTINUE;
        ELSIF acct.balance_nano - posted - w.total >= -acct.credit_limit_nano THEN
          PERFORM ledger_grant_append(it.grant_id, it.account, w.rows, true);
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

-- The rows of `p_rows` not already on the grant: a request whose rows are there (settled by the
-- sweeper from its delivered checkpoint) is not charged again.
CREATE FUNCTION ledger_grant_unposted(p_grant text, p_rows jsonb) RETURNS jsonb LANGUAGE sql STABLE SET enable_seqscan = off AS $$
  SELECT coalesce(jsonb_agg(r), '[]'::jsonb) FROM jsonb_array_elements(p_rows) r
  WHERE NOT EXISTS (SELECT 1 FROM usage_rows u WHERE u.hold_id = p_grant AND u.request_id = r->>'request_id');
$$;

-- Appends usage rows to a grant (`p_late`: only those of requests it does not hold yet). Moves no money.
CREATE FUNCTION ledger_grant_append(p_grant text, p_account text, p_rows jsonb, p_late boolean) RETURNS void LANGUAGE sql SET enable_seqscan = off AS $$
  INSERT INTO usage_rows (id, account_id, hold_id, request_id, model, kind, quantity, unit, amount_nano, details, key_id, deployment)
  SELECT u.id, p_account, p_grant, u.request_id, u.model, u.kind, u.quantity::bigint, u.unit, u.amount::bigint, u.details, u.key_id, u.deployment
  FROM jsonb_to_recordset(CASE WHEN p_late THEN ledger_grant_unposted(p_grant, p_rows) ELSE p_rows END)
       AS u(id text, request_id text, model text, kind text, quantity text, unit text, amount text, details jsonb, key_id text, deployment text);
$$;
