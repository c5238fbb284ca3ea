-- Self-trade prevention made visible (issue 43): a trade between two orders of one account (the
-- taker's stp `none`) is flagged, and an order ended or reduced by self-trade prevention, or ended as
-- an unfilled FOK / the unfilled rest of an IOC, keeps why (reason: self_trade_prevented,
-- fok_not_filled, ioc_rest_cancelled; NULL for every other order) and, for self-trade prevention,
-- the taker's mode (stp). An overload of orders_apply_changes (085) with the two more arrays,
-- NULL = unchanged, so that the one UPDATE of a row per batch carries every change of it.
ALTER TABLE trades ADD COLUMN self_trade boolean NOT NULL DEFAULT false;
ALTER TABLE orders ADD COLUMN reason text, ADD COLUMN stp text;

CREATE FUNCTION orders_apply_changes(
  p_ids bigint[], p_executed numeric[], p_funds numeric[], p_trades integer[], p_states text[],
  p_updated bigint[], p_prices numeric[], p_amounts numeric[], p_reasons text[], p_stps text[]
) RETURNS SETOF orders LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
    RETURN QUERY
      UPDATE orders o
         SET executed = o.executed + p_executed[i], funds = o.funds + p_funds[i],
             trades_count = o.trades_count + p_trades[i], state = coalesce(p_states[i], o.state),
             updated_at = p_updated[i], price = coalesce(p_prices[i], o.price),
             amount = coalesce(p_amounts[i], o.amount), reason = coalesce(p_reasons[i], o.reason),
             stp = CASE WHEN p_reasons[i] IS NULL THEN o.stp ELSE p_stps[i] END
       WHERE o.id = p_ids[i]
      RETURNING o.*;
  END LOOP;
END $$;
