-- 007: files (issue 10; spec 2, 3, 4.5-4.7). Metadata only: blob bytes live in the blob store
-- (src/files/blob), never here. Every timestamp is written by the gateway's clock (src/clock.ts) as
-- a parameter, so expiry is decided by one clock that tests can move.

-- Secrets the replicas share: the key that signs the local blob store's upload and read URLs
-- (generated once by whichever replica starts first; GATEWAY_URL_SIGNING_SECRET overrides it).
CREATE TABLE gateway_secrets (
  name text PRIMARY KEY,
  value bytea NOT NULL
);

-- Temporary files (spec 4.7): pending -> finalized -> deleted. A failed verification deletes at once
-- (deleted_reason 'verification_failed'); the cleanup deletes the blob first, then marks the record.
CREATE TABLE temp_files (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  purpose text NOT NULL,
  content_type text NOT NULL,
  declared_bytes bigint NOT NULL CHECK (declared_bytes > 0),
  blob_key text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'finalized', 'deleted')),
  actual_bytes bigint,
  detected_type text,
  created_at timestamptz NOT NULL,
  upload_expires_at timestamptz NOT NULL,
  finalized_at timestamptz,
  -- pending: when the pending lifetime ends; finalized: when the finalized lifetime ends.
  expires_at timestamptz NOT NULL,
  deleted_at timestamptz,
  deleted_reason text
);
CREATE INDEX temp_files_live_expiry ON temp_files (expires_at) WHERE state <> 'deleted';
CREATE INDEX temp_files_account ON temp_files (account_id, created_at);

-- Messages-format files (spec 4.5, 4.6): uploads stored at the vendor, and skills outputs. A row is
-- the account's reservation against its quota (spec 8: 20 files, 100 MiB) from the moment an upload
-- starts: 'uploading' while it runs, 'active' once stored, 'uncertain' when the vendor's answer was
-- lost (kept until expiry, never retried), 'deleted' after DELETE, expiry or a failed upload.
CREATE TABLE message_files (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  state text NOT NULL CHECK (state IN ('uploading', 'active', 'uncertain', 'deleted')),
  origin text NOT NULL CHECK (origin IN ('upload', 'generated')),
  provider_id text NOT NULL,
  vendor_file_id text,
  filename text NOT NULL,
  mime_type text NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  downloadable boolean NOT NULL,
  -- Generated outputs are kept in the blob store once billed (served by GET /v1/files/{id}/content).
  blob_key text,
  container_id text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  deleted_at timestamptz,
  vendor_released_at timestamptz
);
CREATE INDEX message_files_account_live ON message_files (account_id, created_at) WHERE state <> 'deleted';
CREATE INDEX message_files_expiry ON message_files (expires_at) WHERE state <> 'deleted';
-- Not unique: the vendor's ids are its own business (a mock repeats one); ours are the primary key.
CREATE INDEX message_files_vendor ON message_files (provider_id, vendor_file_id) WHERE vendor_file_id IS NOT NULL;

-- Operation ids (spec 4.6, 7; DESIGN.md "claimed with one insert before anything is reserved"): an id
-- is single-use forever per account, whatever the payload. Skills executions: at most one pending
-- per account (the partial unique index), five completed in a rolling 24 hours (counted at claim).
CREATE TABLE operations (
  account_id text NOT NULL REFERENCES accounts (id),
  operation_id text NOT NULL,
  kind text NOT NULL,
  request_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'completed', 'failed', 'recovery_required')),
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  result jsonb,
  PRIMARY KEY (account_id, operation_id)
);
CREATE UNIQUE INDEX operations_one_pending ON operations (account_id, kind) WHERE state = 'pending';
CREATE INDEX operations_completed ON operations (account_id, kind, finished_at) WHERE state = 'completed';
