-- 010: the account console (issue 13; spec 5.4: keys are created on the account's key page after
-- account creation and email verification). A sign-up waits in `console_signups` until its emailed link
-- is followed (one use, expiring); only then are the account and its console user created. Sessions
-- are server-side; the browser holds only a random id whose SHA-256 digest is stored, like keys.
CREATE TABLE console_signups (
  token_digest  text PRIMARY KEY,            -- hex SHA-256 of the emailed token; the token is never stored
  email         text NOT NULL,
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz
);
CREATE INDEX console_signups_email ON console_signups (email);

CREATE TABLE console_users (
  id            text PRIMARY KEY,
  email         text NOT NULL UNIQUE,         -- lower-cased
  password_hash text NOT NULL,
  account_id    text NOT NULL UNIQUE REFERENCES accounts (id),
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- A session belongs to a console user, or (user_id NULL, operator true) to the operator who signed in
-- with the admin token; an operator session keeps that token's digest and ends when the token changes.
CREATE TABLE console_sessions (
  id_digest    text PRIMARY KEY,
  user_id      text REFERENCES console_users (id),
  operator     boolean NOT NULL DEFAULT false,
  admin_token_digest text,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  CHECK (operator OR user_id IS NOT NULL),
  CHECK (NOT operator OR admin_token_digest IS NOT NULL)
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- Keys get a name (a rotated key keeps it) and a display prefix (`gw-` and the first 4 characters),
-- which is all the key page shows of a key after the one answer that created it.
ALTER TABLE api_keys ADD COLUMN name text;
ALTER TABLE api_keys ADD COLUMN prefix text;
-- The key page's "last used" and "spend this month" read usage rows through usage_rows_account_key
-- (migration 004): no further index, so settling a request writes nothing more than before.
