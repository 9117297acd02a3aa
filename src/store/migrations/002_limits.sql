-- Per-account and per-key rate-limit overrides (issue 4): {requests_per_minute, tokens_per_minute,
-- concurrent_requests}; NULL means "the gateway.config.yaml default" for accounts and "none" for keys.
ALTER TABLE accounts ADD COLUMN limits jsonb;
ALTER TABLE api_keys ADD COLUMN limits jsonb;
