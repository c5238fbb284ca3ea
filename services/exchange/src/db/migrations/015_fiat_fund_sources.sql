-- Fiat (payment gateway). The account object's gateway public keys are the exchange's merchant keys
-- from the configuration (PAYGATE_PUBLIC_KEYS), the same for every account: the random per-account
-- keys of 001 were never known to the gateway, so they go.
DROP TABLE IF EXISTS gateway_public_keys;

-- Saved fiat destinations (the `fund_source_id` of a fiat withdrawal). The field values (a card
-- number...) are sealed with the master key (AES-256-GCM, src/crypto/secret-box.ts) bound to the
-- row's account and nonce; only the masked form is stored in clear.
CREATE TABLE fund_sources (
  id          serial PRIMARY KEY,
  account_id  integer NOT NULL REFERENCES accounts(id),
  currency    text NOT NULL,
  service     text NOT NULL,
  fields_box  text NOT NULL,
  -- Associated data of the box besides the account: random, so two rows never share a box.
  box_nonce   text NOT NULL UNIQUE,
  masked      jsonb NOT NULL,
  label       text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz
);
CREATE INDEX fund_sources_account ON fund_sources(account_id, currency) WHERE deleted_at IS NULL;
