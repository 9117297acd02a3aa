-- 009: operation ids for images and video (issue 11 item 6; spec 4.14, 4.16, 7). The table of
-- migration 007 now also records media operations (kinds 'image' and 'video'), which may run many at
-- once per account: only skills executions are limited to one pending per account (spec 4.6 rule 2).
DROP INDEX operations_one_pending;
CREATE UNIQUE INDEX operations_one_pending ON operations (account_id, kind) WHERE state = 'pending' AND kind = 'skills';
