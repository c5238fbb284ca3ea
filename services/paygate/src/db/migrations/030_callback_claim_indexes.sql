-- The claim (src/callbacks/outbox.ts) walks due callbacks in (next_attempt_at, id) order and stops
-- at its LIMIT: with both columns in the index it no longer reads and sorts every due row of the
-- backlog. The per-object "oldest undetermined event" probe leaves dead letters out as the claim does.
DROP INDEX callback_outbox_pending;
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at, id)
  WHERE delivered_at IS NULL AND dead_at IS NULL;
DROP INDEX callback_outbox_object;
CREATE INDEX callback_outbox_object_open ON callback_outbox (object_type, object_id, id)
  WHERE delivered_at IS NULL AND dead_at IS NULL;
