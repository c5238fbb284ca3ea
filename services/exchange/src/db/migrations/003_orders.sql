-- Orders, trades and the matching engine's command log (issue #7).
-- Amounts are integers in the engine's units of the market: base in 10^-base_precision, prices in
-- 10^-quote_precision, quote totals in 10^-(base_precision + quote_precision).

-- Every command the engine accepted, per market, in the order it was applied. Replaying it from an
-- empty engine rebuilds the book exactly (same orders, same priority, same counters).
CREATE TABLE engine_commands (
  market  text NOT NULL,
  seq     bigint NOT NULL,
  command jsonb NOT NULL,
  PRIMARY KEY (market, seq)
);

CREATE TABLE orders (
  id           bigint PRIMARY KEY,
  market       text NOT NULL,
  account_id   integer NOT NULL REFERENCES accounts(id),
  side         text NOT NULL CHECK (side IN ('buy', 'sell')),
  kind         text NOT NULL CHECK (kind IN ('limit', 'market', 'market_by_quote', 'limit_stop_loss')),
  price        numeric(78, 0),
  stop_price   numeric(78, 0),
  -- Original base amount (null for market_by_quote) and quote target (market_by_quote only).
  amount       numeric(78, 0),
  quote        numeric(78, 0),
  executed     numeric(78, 0) NOT NULL DEFAULT 0,
  funds        numeric(78, 0) NOT NULL DEFAULT 0,
  trades_count integer NOT NULL DEFAULT 0,
  state        text NOT NULL CHECK (state IN ('wait', 'done', 'cancel')),
  created_at   bigint NOT NULL,
  updated_at   bigint NOT NULL,
  CHECK (amount IS NULL OR executed <= amount)
);
CREATE INDEX orders_account ON orders(account_id, state, id);
CREATE INDEX orders_account_updated ON orders(account_id, updated_at);

CREATE TABLE trades (
  id            bigint PRIMARY KEY,
  market        text NOT NULL,
  price         numeric(78, 0) NOT NULL,
  amount        numeric(78, 0) NOT NULL,
  quote         numeric(78, 0) NOT NULL,
  taker_side    text NOT NULL CHECK (taker_side IN ('buy', 'sell')),
  buy_order_id  bigint NOT NULL,
  sell_order_id bigint NOT NULL,
  buy_account   integer NOT NULL,
  sell_account  integer NOT NULL,
  buyer_fee     numeric(78, 0) NOT NULL,
  seller_fee    numeric(78, 0) NOT NULL,
  created_at    bigint NOT NULL
);
CREATE INDEX trades_market_time ON trades(market, created_at);
CREATE INDEX trades_buy_order ON trades(buy_order_id);
CREATE INDEX trades_sell_order ON trades(sell_order_id);
CREATE INDEX trades_buy_account ON trades(buy_account, market);
CREATE INDEX trades_sell_account ON trades(sell_account, market);
