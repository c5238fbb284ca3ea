-- Exchange cluster (src/cluster/, README "Running a cluster"): several nodes on one database, each
-- market written by the one node holding its lease. Every time below is the database's clock.

-- The nodes, each alive while its heartbeat is recent; `applied` holds the command sequence number
-- each node's copy of every market has reached ({"btcusd": 1234, ...}), for `cluster status`.
CREATE TABLE cluster_nodes (
  node_id      text PRIMARY KEY,
  url          text NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  applied      jsonb NOT NULL DEFAULT '{}'
);

-- One row per market: who may write it (owner, until expires_at), the epoch that fences its batches
-- (bumped at every change of owner), where an operator pinned it, a planned move, the sequence
-- number of its last committed batch and the last order and trade ids its batches used. A market's
-- ids are the numbers congruent to id_slot modulo 1024 (src/cluster/ids.ts), so the writers of
-- different markets on different nodes never take the same id.
CREATE TABLE market_leases (
  market        text PRIMARY KEY,
  id_slot       integer NOT NULL UNIQUE CHECK (id_slot >= 0 AND id_slot < 1024),
  owner         text,
  epoch         bigint NOT NULL DEFAULT 0,
  expires_at    timestamptz NOT NULL DEFAULT '-infinity',
  pinned_to     text,
  moving_to     text,
  seq           bigint NOT NULL DEFAULT 0,
  last_order_id bigint NOT NULL,
  last_trade_id bigint NOT NULL
);

-- The batch chain of each node's pipeline (what 007_batch_chain.sql's single row is to one process).
CREATE TABLE node_chains (
  node_id text PRIMARY KEY,
  seq     bigint NOT NULL DEFAULT 0
);

-- Background jobs run by one node of the cluster at a time (src/cluster/jobs.ts).
CREATE TABLE cluster_jobs (
  job        text PRIMARY KEY,
  owner      text,
  epoch      bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT '-infinity'
);

-- Refuses a batch whose market lease its writer no longer holds (SQLSTATE SVC02: never retried).
CREATE FUNCTION cluster_fenced(market text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the lease of market % is no longer held by this node', market USING ERRCODE = 'SVC02'; END $$;
