-- 017: alerts (issue 33 item 3). Events are written to a durable outbox and delivered at least once
-- to each endpoint subscribed when the event was written (a webhook by its URL, or `mail:` for the
-- account's console user); the receiver deduplicates by the event's id. 016 is the keys' controls.
ALTER TABLE accounts ADD COLUMN low_balance_nano bigint CHECK (low_balance_nano >= 0);  -- own threshold; NULL: the config's
ALTER TABLE accounts ADD COLUMN low_balance_alerted boolean NOT NULL DEFAULT false;      -- below it, and alerted

CREATE TABLE alert_events (
  id         text PRIMARY KEY,
  type       text NOT NULL,
  account_id text REFERENCES accounts (id),
  body       jsonb NOT NULL,                 -- what is delivered, as it is delivered
  created_at timestamptz NOT NULL
);

CREATE TABLE alert_deliveries (
  event_id     text NOT NULL REFERENCES alert_events (id),
  endpoint     text NOT NULL,               -- a webhook's URL, or mail:<address>
  attempts     integer NOT NULL DEFAULT 0,
  next_at      timestamptz NOT NULL,
  delivered_at timestamptz,
  failed_at    timestamptz,                 -- given up after alerts.retry_hours
  last_error   text,
  PRIMARY KEY (event_id, endpoint)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (next_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX accounts_own_low_balance ON accounts (id) WHERE low_balance_nano IS NOT NULL;
CREATE INDEX accounts_low_balance_alerted ON accounts (id) WHERE low_balance_alerted;
-- key.budget_reached fires once per key and period: the window it was reached in is marked.
ALTER TABLE key_budget_windows ADD COLUMN budget_alerted boolean NOT NULL DEFAULT false;
