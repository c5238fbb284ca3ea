-- Keyed updates of the order writer's batch statement (src/orders/store.ts, writeBatch), one row at
-- a time by primary key. Written as a join of the table with the batch's arrays, the plan is chosen
-- once per connection (prepared statement) from the table's size at that moment: prepared on a young
-- database, it scanned the whole orders table on every batch, and kept doing so as the table grew
-- (3.7 ms of a 4.8 ms batch at 12,000 orders). A lookup by primary key is an index scan whatever the
-- table's size.

-- Adds fills to existing orders and sets their state; returns the orders as they are now.
CREATE FUNCTION orders_apply_changes(
  p_ids bigint[], p_executed numeric[], p_funds numeric[], p_trades integer[], p_states text[],
  p_updated bigint[]
) RETURNS SETOF orders LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
    RETURN QUERY
      UPDATE orders o
         SET executed = o.executed + p_executed[i], funds = o.funds + p_funds[i],
             trades_count = o.trades_count + p_trades[i], state = coalesce(p_states[i], o.state),
             updated_at = p_updated[i]
       WHERE o.id = p_ids[i]
      RETURNING o.*;
  END LOOP;
END $$;

-- Records the last nonces a batch used with each API key, only where the key is still usable and its
-- stored nonces are below the smallest the batch accepted; returns the ids of the keys recorded.
CREATE FUNCTION api_keys_record_nonces(
  p_ids integer[], p_v2 bigint[], p_v3 bigint[], p_min_v2 bigint[], p_min_v3 bigint[]
) RETURNS SETOF integer LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
    RETURN QUERY
      UPDATE api_keys k
         SET last_nonce_v2 = greatest(k.last_nonce_v2, p_v2[i]),
             last_nonce_v3 = greatest(k.last_nonce_v3, p_v3[i]), last_used_at = now()
       WHERE k.id = p_ids[i] AND k.last_nonce_v2 < p_min_v2[i] AND k.last_nonce_v3 < p_min_v3[i]
         AND k.enabled AND k.revoked_at IS NULL
      RETURNING k.id;
  END LOOP;
END $$;
