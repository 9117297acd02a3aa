-- 008: video jobs (issue 11 item 5; spec 2 "Video job", 3, 4.16). A job is the account's record of an
-- asynchronous generation at the vendor. It owns the request's hold (hold_id): the request that
-- submitted it ends without settling, and the poller (one replica at a time) settles the seconds the
-- vendor produced, or releases the hold when the job fails or passes its deadline. Timestamps are the
-- gateway clock's, written as parameters.
CREATE TABLE video_jobs (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  key_id text,
  -- The submitting request: its id is the hold's and the usage row's request id.
  request_id text NOT NULL,
  hold_id text NOT NULL,
  offering_id text NOT NULL,
  provider_id text NOT NULL,
  -- The upstream wire format, for the translator that reads the vendor's job status.
  upstream_format text NOT NULL,
  vendor_job_id text NOT NULL,
  -- A remix names the job it remixes (same account); a generation names none.
  source_job_id text REFERENCES video_jobs (id),
  requested_seconds integer NOT NULL CHECK (requested_seconds > 0),
  size text NOT NULL,
  state text NOT NULL CHECK (state IN ('queued', 'in_progress', 'completed', 'failed')),
  progress integer NOT NULL DEFAULT 0,
  error_code text,
  error_message text,
  -- Once completed: the stored output (a temp_files record of purpose VIDEO_OUTPUT), the seconds
  -- billed and the charge.
  output_file_id text,
  billed_seconds integer,
  amount_nano bigint,
  -- An operation id the client sent (spec 4.16 X-Gateway-Operation-ID), for the same answer on reuse.
  operation_id text,
  created_at timestamptz NOT NULL,
  next_poll_at timestamptz NOT NULL,
  deadline_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX video_jobs_live ON video_jobs (next_poll_at) WHERE state IN ('queued', 'in_progress');
CREATE INDEX video_jobs_account ON video_jobs (account_id, created_at);
