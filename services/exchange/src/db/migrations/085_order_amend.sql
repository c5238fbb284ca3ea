-- Amend keeping priority (issue 43): a batch's changes of older orders may also set their limit price
-- and total amount. An overload of orders_apply_changes (005) with two more arrays, NULL = unchanged,
-- so that the one UPDATE of a row per batch carries every change of it.
CREATE FUNCTION orders_apply_changes(
  p_ids bigint[], p_executed numeric[], p_funds numeric[], p_trades integer[], p_states text[],
  p_updated bigint[], p_prices numeric[], p_amounts numeric[]
) RETURNS SETOF orders LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
    RETURN QUERY
      UPDATE orders o
         SET executed = o.executed + p_executed[i], funds = o.funds + p_funds[i],
             trades_count = o.trades_count + p_trades[i], state = coalesce(p_states[i], o.state),
             updated_at = p_updated[i], price = coalesce(p_prices[i], o.price),
             amount = coalesce(p_amounts[i], o.amount)
       WHERE o.id = p_ids[i]
      RETURNING o.*;
  END LOOP;
END $$;
