-- Accounts, API keys, currencies and the double-entry ledger.

CREATE TABLE accounts (
  id                    serial PRIMARY KEY,
  kind                  text NOT NULL CHECK (kind IN ('user', 'system')),
  -- System accounts are found by code: 'external' (counterpart of money entering or leaving), 'fees'.
  system_code           text UNIQUE,
  email                 text UNIQUE,
  svcid                 text NOT NULL UNIQUE,
  two_factor            boolean NOT NULL DEFAULT false,
  withdraw_confirmation boolean NOT NULL DEFAULT false,
  announcements         boolean NOT NULL DEFAULT true,
  -- Only the 'external' account may go below zero: it mirrors what the exchange owes its users.
  may_go_negative       boolean NOT NULL DEFAULT false,
  created_at            timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'system') = (system_code IS NOT NULL)),
  CHECK (kind = 'system' OR email IS NOT NULL)
);

CREATE TABLE gateway_public_keys (
  account_id integer NOT NULL REFERENCES accounts(id),
  currency   text NOT NULL,
  public_key text NOT NULL UNIQUE,
  PRIMARY KEY (account_id, currency)
);

CREATE TABLE api_keys (
  id           serial PRIMARY KEY,
  account_id   integer NOT NULL REFERENCES accounts(id),
  public_key   text NOT NULL UNIQUE,
  -- AES-256-GCM under the master key, bound to public_key as associated data.
  secret_box   text NOT NULL,
  scopes       text[] NOT NULL,
  enabled      boolean NOT NULL DEFAULT true,
  label        text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz,
  -- Highest nonce accepted so far, per protocol (v3 svc-nonce, v2 tonce), in ms.
  last_nonce_v3 bigint NOT NULL DEFAULT 0,
  last_nonce_v2 bigint NOT NULL DEFAULT 0,
  CHECK (scopes <@ ARRAY['read', 'trade', 'withdraw']::text[])
);
CREATE INDEX api_keys_account ON api_keys(account_id);

-- Currencies known to the ledger, synchronised from the reference file at start-up.
CREATE TABLE currencies (
  code      text PRIMARY KEY,
  precision integer NOT NULL CHECK (precision BETWEEN 0 AND 18)
);

CREATE TABLE journal_entries (
  id              bigserial PRIMARY KEY,
  kind            text NOT NULL,
  reason          text NOT NULL,
  -- Optional caller-chosen key making a posting idempotent (settlement of a fill, a deposit credit).
  idempotency_key text UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE journal_legs (
  id         bigserial PRIMARY KEY,
  entry_id   bigint NOT NULL REFERENCES journal_entries(id),
  account_id integer NOT NULL REFERENCES accounts(id),
  currency   text NOT NULL REFERENCES currencies(code),
  bucket     text NOT NULL CHECK (bucket IN ('available', 'locked')),
  amount     numeric(78, 0) NOT NULL CHECK (amount <> 0)
);
CREATE INDEX journal_legs_entry ON journal_legs(entry_id);
CREATE INDEX journal_legs_account ON journal_legs(account_id, currency);

-- Running totals of the legs; the CHECK is the last line of defence against negative balances.
CREATE TABLE balances (
  account_id      integer NOT NULL REFERENCES accounts(id),
  currency        text NOT NULL REFERENCES currencies(code),
  available       numeric(78, 0) NOT NULL DEFAULT 0,
  locked          numeric(78, 0) NOT NULL DEFAULT 0,
  may_go_negative boolean NOT NULL DEFAULT false,
  PRIMARY KEY (account_id, currency),
  CHECK (may_go_negative OR (available >= 0 AND locked >= 0))
);

INSERT INTO accounts (kind, system_code, svcid, may_go_negative, announcements)
VALUES ('system', 'external', 'system-external', true, false),
       ('system', 'fees', 'system-fees', false, false);
