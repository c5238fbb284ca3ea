-- The order writers send batch statements on one connection without waiting for each to commit
-- (src/orders/pipeline.ts): a batch is computed on the state its predecessors will leave. Each batch
-- statement moves this row from the value its predecessor set to a value of its own and refuses
-- itself (SQLSTATE SVC01) when the row holds anything else, so a batch commits only if every batch
-- sent before it did.
CREATE TABLE batch_chain (
  id  integer PRIMARY KEY CHECK (id = 1),
  seq bigint NOT NULL
);
INSERT INTO batch_chain (id, seq) VALUES (1, 0);
