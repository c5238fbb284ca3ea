-- Cancel all, and the dead-man's switch (issue 43, src/cancel-all/).

-- The API key an order was placed with (REST: the signing key; the feed: the socket's key), written
-- by the order's own batch statement, so that a key's switch finds every order of that key (null:
-- orders placed before this column, or by the system). Only open orders are looked up by it.
ALTER TABLE orders ADD COLUMN api_key_id integer;
CREATE INDEX orders_api_key_open ON orders (api_key_id) WHERE state = 'wait';

-- One switch per API key (`POST /v3/order/cancel-all-after`). `trigger_at` (ms, the servers' clock)
-- null: disabled. A node claims a due switch (`claimed_until` in the future keeps the others off it;
-- a claimer that died is replaced once it passes), cancels the key's open orders through the normal
-- cancel path and sets `fired_at`: a switch fires once per arming; a renewal arms it again.
CREATE TABLE cancel_after (
  api_key_id    integer PRIMARY KEY REFERENCES api_keys(id),
  account_id    integer NOT NULL REFERENCES accounts(id),
  trigger_at    bigint,
  armed_at      bigint NOT NULL,
  claimed_by    text,
  claimed_until bigint,
  fired_at      bigint,
  -- The node that fired it (a cluster's NODE_ID, `single` for one process).
  fired_by      text
);
CREATE INDEX cancel_after_due ON cancel_after (trigger_at) WHERE trigger_at IS NOT NULL AND fired_at IS NULL;
