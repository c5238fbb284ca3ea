-- The live feed on every node of a cluster (src/cluster/, README "Running a cluster"): a batch written
-- by a cluster node logs, beside its commands and in the same statement, what it changed for the
-- feed: its trades, the orders it created or changed as stored, and the available funds of every
-- balance it moved. Nodes that follow the market read it with the commands and publish the same
-- frames, under the same sequence numbers, as the owner. NULL in rows of a single process.
ALTER TABLE engine_commands ADD COLUMN feed jsonb;
COMMENT ON COLUMN engine_commands.feed IS
  'Cluster only: {"trades": [...], "created": [...], "changed": [...], "balances": [...]} of the batch, for the followers'' live feed (src/orders/batch-feed.ts)';
