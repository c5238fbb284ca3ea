-- Rounds of each background job a cluster node ran since it started (src/cluster/background.ts),
-- written with its heartbeat: `cluster status` shows which node does what.
ALTER TABLE cluster_nodes ADD COLUMN job_rounds jsonb NOT NULL DEFAULT '{}'::jsonb;
