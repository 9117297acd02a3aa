-- 016: per-key controls (issue 33 item 2). A key may carry a budget (`budget_nano` per
-- `budget_period`: 'day' and 'month' start at UTC boundaries of the gateway's clock, 'total' never
-- resets), a list of `allowed_models` (offering ids, `*` wildcards) and an expiry `expires_at`.
--
-- The budget is enforced with the balance's guarantees (no overspend under concurrency, across
-- replicas), by the same guarded transaction that reserves the request's hold:
--   * a request on a key with a budget always takes the strict path (never a credit grant: grants are
--     per account and admit in memory) and reserves through ledger_reserve_key, which locks the
--     account row, then the key's window for the period, and reserves only if
--        spent + held + quote <= budget
--     where `spent` is the window's posted charges and `held` the sum of the key's open holds marked
--     for that window (holds.budget_key_id, holds.budget_period_start). Otherwise nothing is written:
--     the account's balance is untouched (402 key_budget_exceeded).
--   * `held` is not stored, it is read from the open holds themselves, so every way a hold ends
--     (settle, release, the sweeper, the release backlog, a crash) keeps it right with no change to
--     those statements: a closed hold is no longer held.
--   * `spent` is moved by one statement-level trigger on usage_rows: every row appended for a marked
--     hold (a settle, a batch settle, the sweeper settling a delivered checkpoint) adds its amount to
--     the window its hold was reserved in, in the same statement; a refund of such a row takes it off.
--     So a hold closing and its charge landing in `spent` are one commit: a reserve never sees both
--     or neither counted twice.
--   * a window starts, the first time a request of its period reserves, at what the key's usage rows
--     since the period's start already add up to (its spend before it had a budget, or before the
--     budget's period changed); windows of past periods stay as a record.
-- Lock order, as everywhere: holds by id, then accounts by id, then key windows by (key, start).
-- ledger_reserve_key locks its account before its window; the trigger runs after the statement that
-- appended the rows (settles have locked their accounts by then) and locks the accounts of the rows
-- it counts (a refund has not yet) before the windows.

ALTER TABLE api_keys ADD COLUMN budget_nano bigint CHECK (budget_nano >= 0);
ALTER TABLE api_keys ADD COLUMN budget_period text CHECK (budget_period IN ('day', 'month', 'total'));
ALTER TABLE api_keys ADD COLUMN allowed_models jsonb;
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_budget_period CHECK ((budget_nano IS NULL) = (budget_period IS NULL));

ALTER TABLE holds ADD COLUMN budget_key_id text;
ALTER TABLE holds ADD COLUMN budget_period_start timestamptz;
CREATE INDEX holds_open_key_budget ON holds (budget_key_id, budget_period_start) WHERE closed_at IS NULL AND budget_key_id IS NOT NULL;

CREATE TABLE key_budget_windows (
  key_id       text NOT NULL REFERENCES api_keys (id),
  period_start timestamptz NOT NULL,
  spent_nano   bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key_id, period_start)
);

-- The start of the period that `p_now` falls in: UTC midnight, the first of the UTC month, or the epoch.
CREATE FUNCTION key_period_start(p_period text, p_now timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_period
    WHEN 'day' THEN date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    WHEN 'month' THEN date_trunc('month', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    ELSE timestamptz '1970-01-01 00:00:00+00' END
$$;

-- Creates the key's window for the period starting at `p_start` if it is missing, at the key's spend
-- since then; answers nothing. Its caller holds the account's lock.
CREATE FUNCTION key_budget_window_open(p_key text, p_account text, p_start timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM key_budget_windows WHERE key_id = p_key AND period_start = p_start) THEN
    INSERT INTO key_budget_windows (key_id, period_start, spent_nano)
      SELECT p_key, p_start, coalesce(sum(u.amount_nano), 0)::bigint FROM usage_rows u
      WHERE u.account_id = p_account AND u.key_id = p_key AND u.created_at >= p_start
      ON CONFLICT (key_id, period_start) DO NOTHING;
  END IF;
END;
$$;

-- Reserve for a request on key `p_key` (its account `p_account`): as ledger_reserve_one
-- (src/ledger/hold-statements.ts) when the key has no budget; with one, guarded by the key's window of
-- the period `p_now` (the gateway's clock) falls in as well. Answers 'reserved', 'key_budget_exceeded'
-- (nothing written to the account), 'insufficient_balance' or 'exists' (a hold with that id exists:
-- nothing debited). Commits without waiting for the WAL flush, as any reserve (migration 006).
CREATE FUNCTION ledger_reserve_key(p_hold text, p_account text, p_amount bigint, p_ttl_ms bigint, p_key text, p_now timestamptz)
RETURNS text LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  k record;
  start timestamptz;
  spent bigint;
  held bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM 1 FROM accounts WHERE id = p_account FOR UPDATE;
  IF EXISTS (SELECT 1 FROM holds WHERE id = p_hold) THEN
    RETURN 'exists';
  END IF;
  SELECT budget_nano, budget_period INTO k FROM api_keys WHERE id = p_key AND account_id = p_account;
  IF k.budget_nano IS NOT NULL THEN
    start := key_period_start(k.budget_period, p_now);
    PERFORM key_budget_window_open(p_key, p_account, start);
    SELECT w.spent_nano INTO spent FROM key_budget_windows w WHERE w.key_id = p_key AND w.period_start = start FOR UPDATE;
    SELECT coalesce(sum(h.amount_nano), 0)::bigint INTO held FROM holds h
      WHERE h.budget_key_id = p_key AND h.budget_period_start = start AND h.closed_at IS NULL;
    IF spent + held + p_amount > k.budget_nano THEN
      RETURN 'key_budget_exceeded';
    END IF;
  END IF;
  UPDATE accounts SET balance_nano = balance_nano - p_amount, held_nano = held_nano + p_amount
    WHERE id = p_account AND balance_nano - p_amount >= -credit_limit_nano;
  IF NOT FOUND THEN
    RETURN 'insufficient_balance';
  END IF;
  INSERT INTO holds (id, account_id, amount_nano, expires_at, budget_key_id, budget_period_start)
    VALUES (p_hold, p_account, p_amount, now() + p_ttl_ms * interval '1 millisecond',
            CASE WHEN start IS NULL THEN NULL ELSE p_key END, start);
  RETURN 'reserved';
END;
$$;

-- What the key's window of the period `p_now` falls in holds: its start, spent and held (nothing when
-- the key has no budget). A window not opened yet is read as it would open.
CREATE FUNCTION key_budget_usage(p_key text, p_now timestamptz) RETURNS TABLE (period_start timestamptz, spent_nano bigint, held_nano bigint)
LANGUAGE sql STABLE AS $$
  SELECT s.start,
         coalesce((SELECT w.spent_nano FROM key_budget_windows w WHERE w.key_id = k.id AND w.period_start = s.start),
                  (SELECT coalesce(sum(u.amount_nano), 0) FROM usage_rows u WHERE u.account_id = k.account_id AND u.key_id = k.id AND u.created_at >= s.start))::bigint,
         (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.budget_key_id = k.id AND h.budget_period_start = s.start AND h.closed_at IS NULL)::bigint
  FROM api_keys k, LATERAL (SELECT key_period_start(k.budget_period, p_now) AS start) s
  WHERE k.id = p_key AND k.budget_nano IS NOT NULL
$$;

-- The trigger: the rows just appended that count against a key's window (a row of a marked hold, or
-- the refund of one), summed per window, added to it.
CREATE FUNCTION key_budget_spend() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  keys text[];
  starts timestamptz[];
  amounts bigint[];
  accts text[];
BEGIN
  SELECT array_agg(c.key_id), array_agg(c.start), array_agg(c.amount) INTO keys, starts, amounts
  FROM (SELECT h.budget_key_id AS key_id, h.budget_period_start AS start, sum(r.amount_nano)::bigint AS amount
        FROM new_rows r
        JOIN holds h ON h.id = coalesce(r.hold_id, (SELECT o.hold_id FROM usage_rows o WHERE o.id = r.refund_of))
        WHERE h.budget_key_id IS NOT NULL
        GROUP BY 1, 2) c;
  IF keys IS NULL THEN
    RETURN NULL;
  END IF;
  accts := ARRAY(SELECT DISTINCT account_id FROM new_rows);
  PERFORM 1 FROM accounts WHERE id = ANY (accts) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM key_budget_windows w, unnest(keys, starts) AS t(key_id, start)
    WHERE w.key_id = t.key_id AND w.period_start = t.start ORDER BY w.key_id, w.period_start FOR UPDATE OF w;
  UPDATE key_budget_windows w SET spent_nano = w.spent_nano + t.amount
    FROM unnest(keys, starts, amounts) AS t(key_id, start, amount)
    WHERE w.key_id = t.key_id AND w.period_start = t.start;
  RETURN NULL;
END;
$$;

CREATE TRIGGER usage_rows_key_budget AFTER INSERT ON usage_rows
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION key_budget_spend();
