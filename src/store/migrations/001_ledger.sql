-- 001: the money ledger. All amounts are integer nano-USD (1 USD = 1e9) in bigint columns.
-- Invariant per account (checked by Ledger.reconcile):
--   opening_nano + sum(topups) - balance_nano == sum(usage) - sum(refunds) + sum(open holds)
-- balance_nano is the spendable balance: an open hold has already been taken off it (and added to
-- held_nano) until it is settled, released or swept.

CREATE TABLE accounts (
  id                text PRIMARY KEY,
  opening_nano      bigint NOT NULL,
  balance_nano      bigint NOT NULL,
  credit_limit_nano bigint NOT NULL DEFAULT 0 CHECK (credit_limit_nano >= 0),
  held_nano         bigint NOT NULL DEFAULT 0 CHECK (held_nano >= 0),
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  digest     text NOT NULL UNIQUE,          -- hex SHA-256 of the key; the key itself is never stored
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE topups (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  amount_nano bigint NOT NULL CHECK (amount_nano > 0),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX topups_account ON topups (account_id);

CREATE TABLE holds (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  amount_nano bigint NOT NULL CHECK (amount_nano >= 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  closed_at   timestamptz,                  -- set once, by whoever gives the amount back
  outcome     text CHECK (outcome IN ('settled', 'released', 'expired')),
  settled_at  timestamptz,                  -- set once, by the one settle that charged usage rows
  CHECK ((closed_at IS NULL) = (outcome IS NULL))
);
CREATE INDEX holds_open_expiry ON holds (expires_at) WHERE closed_at IS NULL;
CREATE INDEX holds_open_account ON holds (account_id) WHERE closed_at IS NULL;

-- Append-only. ids are time-sortable ('use_' + hex time + counter), compared bytewise (COLLATE "C"),
-- so ORDER BY id DESC is newest first and an id is a pagination cursor.
CREATE TABLE usage_rows (
  id          text COLLATE "C" PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  hold_id     text REFERENCES holds (id),
  request_id  text NOT NULL,
  model       text NOT NULL,
  kind        text NOT NULL,
  quantity    bigint NOT NULL CHECK (quantity >= 0),
  unit        text NOT NULL,
  amount_nano bigint NOT NULL,
  details     jsonb NOT NULL DEFAULT '{}'::jsonb,
  refund_of   text COLLATE "C" UNIQUE REFERENCES usage_rows (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'refund') = (refund_of IS NOT NULL)),
  CHECK (CASE WHEN refund_of IS NULL THEN amount_nano >= 0 ELSE amount_nano <= 0 END)
);
CREATE INDEX usage_rows_account_id ON usage_rows (account_id, id);
CREATE INDEX usage_rows_hold ON usage_rows (hold_id) WHERE hold_id IS NOT NULL;

CREATE FUNCTION usage_rows_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'usage_rows is append-only: % is not allowed (a refund is a new row)', TG_OP
    USING ERRCODE = 'raise_exception';
END;
$$;

CREATE TRIGGER usage_rows_no_change BEFORE UPDATE OR DELETE ON usage_rows
  FOR EACH ROW EXECUTE FUNCTION usage_rows_append_only();
CREATE TRIGGER usage_rows_no_truncate BEFORE TRUNCATE ON usage_rows
  FOR EACH STATEMENT EXECUTE FUNCTION usage_rows_append_only();
