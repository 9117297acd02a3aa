-- 015: stored responses (issue 31 item 3). POST /v1/responses with `store` (default true, as OpenAI)
-- keeps each response of its account until `expires_at` (responses.store_ttl_seconds); GET, DELETE
-- and input_items read only the caller's rows and treat an expired row as absent, and the
-- responses-sweep job deletes expired rows.
--
--   provider_id  NULL: a translated model's response, kept whole here. Set: a passthrough model's,
--                kept by that vendor; the row records only whose it is (account and provider).
--   response     the Response object as the client received it (NULL for a passthrough one).
--   input_items  this request's own input items, with ids, as input_items lists them.
--   context      the conversation this response continued: the earlier turns' items before its
--                input (what previous_response_id rebuilds, one row read, no walk up the chain).
CREATE TABLE stored_responses (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  provider_id text,
  response jsonb,
  input_items jsonb NOT NULL DEFAULT '[]'::jsonb,
  context jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX stored_responses_expiry ON stored_responses (expires_at);
