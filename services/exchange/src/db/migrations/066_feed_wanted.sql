-- The feed log only while someone follows (src/cluster/, README "Running a cluster"): a node that
-- follows a market written by another node keeps `feed_wanted_until` ahead of the database's clock,
-- and a batch logs its feed (065_feed_log.sql) only while it is. The batch reads it from the lease row
-- it fences on, under that row's lock, so a flag committed before the batch's fence is always seen.
-- A one-node cluster (nobody following) logs commands only, as a single process does.
ALTER TABLE market_leases ADD COLUMN feed_wanted_until timestamptz NOT NULL DEFAULT '-infinity';
