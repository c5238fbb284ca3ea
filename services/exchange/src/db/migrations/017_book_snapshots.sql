-- Durable snapshots of each market's matching engine (src/snapshots/), so that a start-up restores
-- the newest valid one and replays only the commands logged after it. A row is written whole in one
-- transaction, off the order batch statements; the writer keeps the newest few (BOOK_SNAPSHOT_KEEP)
-- so a snapshot found corrupt falls back to the one before it.
CREATE TABLE book_snapshots (
  market   text NOT NULL,
  -- The writer's command sequence number the snapshot covers: the last command applied to it.
  seq      bigint NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now(),
  -- The engine in the binary form of src/snapshots/codec.ts, ending with its SHA-256.
  snapshot bytea NOT NULL,
  PRIMARY KEY (market, seq)
);
