-- The order writer logs each batch as one row: a JSON array of its commands under the sequence
-- number of the last one. Rows written before hold one command object; readers accept both.
COMMENT ON COLUMN engine_commands.command IS
  'One batch of engine commands (JSON array, seq = sequence number of its last command) or, in rows written before batches were logged whole, one command object';
