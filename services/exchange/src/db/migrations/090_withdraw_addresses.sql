-- Withdrawal address book with a time lock (issue 43, src/withdraw-addresses/). An entry is usable
-- from `usable_at` on (its confirmation plus WITHDRAW_ADDRESS_LOCK_S); an account with
-- `withdraw_allowlist_only`, and a key with the scope `withdraw_allowlisted`, may send crypto only to
-- such entries.

CREATE TABLE withdraw_addresses (
  id                 serial PRIMARY KEY,
  account_id         integer NOT NULL REFERENCES accounts(id),
  currency           text NOT NULL REFERENCES currencies(code),
  -- As the owner typed it (trimmed), shown back; withdrawals are matched by `address_key`.
  address            text NOT NULL,
  -- The custody's canonical form of the address (bech32 and hex in lower case, ...): two spellings
  -- of one destination share it, two destinations never do.
  address_key        text NOT NULL,
  -- Destination tag (xrp); null for none. A withdrawal matches only with the same memo.
  memo               text,
  label              text NOT NULL DEFAULT '',
  status             text NOT NULL CHECK (status IN (
                       'awaiting_confirmation', 'confirmed', 'canceled', 'expired', 'deleted', 'revoked')),
  created_at         timestamptz NOT NULL,
  -- An entry awaiting its e-mailed confirmation is dead after this (the links' expiry).
  confirm_expires_at timestamptz,
  confirmed_at       timestamptz,
  usable_at          timestamptz,
  ended_at           timestamptz,
  CHECK (status <> 'confirmed' OR usable_at IS NOT NULL)
);
-- One live entry per destination of an account.
CREATE UNIQUE INDEX withdraw_addresses_live
  ON withdraw_addresses (account_id, currency, address_key, coalesce(memo, ''))
  WHERE status IN ('awaiting_confirmation', 'confirmed');
CREATE INDEX withdraw_addresses_account ON withdraw_addresses (account_id, id);

ALTER TABLE accounts ADD COLUMN withdraw_allowlist_only boolean NOT NULL DEFAULT false;

-- The entry a restricted withdrawal was allowed by: ending the entry cancels the withdrawals it
-- allowed that have not started sending.
ALTER TABLE withdrawals ADD COLUMN withdraw_address_id integer REFERENCES withdraw_addresses(id);
CREATE INDEX withdrawals_withdraw_address ON withdrawals (withdraw_address_id)
  WHERE withdraw_address_id IS NOT NULL;

-- The scope `withdraw_allowlisted` is given instead of `withdraw`, never with it.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (
  scopes <@ ARRAY['read', 'trade', 'withdraw', 'withdraw_allowlisted']::text[]
  AND NOT (scopes @> ARRAY['withdraw', 'withdraw_allowlisted']::text[]));
