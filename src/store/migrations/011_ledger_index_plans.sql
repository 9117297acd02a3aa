-- 011: the ledger's functions never plan a sequential scan.
--
-- Their statements run with generic plans (migration 003: planned once per connection, then reused
-- for as long as the connection lives). A plan made while holds was a few pages long read the whole
-- table (a sequential scan cost less than ten index probes then), and kept reading it once the table
-- had grown: measured on a fresh database under a steady load, ledger_settle's join on holds was a
-- sequential scan, a batch took 30-100 ms at 7,500 holds, and the gateway served 100-400 requests a
-- second instead of about 2,000. Autovacuum's ANALYZE would invalidate such plans, but it may be off,
-- or late; PGlite has none. Every statement of these functions reaches holds and accounts by primary
-- key, so the planner is told to take the index whatever the table's size: with enable_seqscan off a
-- sequential scan is chosen only where no index can serve, which no statement here needs.
ALTER FUNCTION ledger_batch(jsonb) SET enable_seqscan = off;
ALTER FUNCTION ledger_settle(jsonb) SET enable_seqscan = off;
ALTER FUNCTION ledger_reserve(jsonb) SET enable_seqscan = off;
ALTER FUNCTION ledger_release(text[], text) SET enable_seqscan = off;
ALTER FUNCTION ledger_expire(text[]) SET enable_seqscan = off;
