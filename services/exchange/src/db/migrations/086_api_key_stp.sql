-- Self-trade prevention default per API key (issue 43): the mode an order placed with the key gets
-- when it names none; NULL = the engine's default (expire_maker). Set with `key update --stp`.
ALTER TABLE api_keys ADD COLUMN stp text
  CHECK (stp IS NULL OR stp IN ('expire_maker', 'expire_taker', 'expire_both', 'decrement', 'none'));
