-- Wallet (issue 14): deposit addresses and deposits. Deposits also serve the fiat side (src/fiat/):
-- `provider` names the fiat service and is null for crypto; the crypto-only columns are nullable.
-- Amounts are ledger minor units of the currency (ledger_precision decimals), as in `balances`.

CREATE TABLE deposit_addresses (
  id         serial PRIMARY KEY,
  account_id integer NOT NULL REFERENCES accounts(id),
  currency   text NOT NULL REFERENCES currencies(code),
  address    text NOT NULL,
  -- Destination tag / memo for currencies that share one address between accounts (xrp).
  memo       text,
  -- Which custody gave it out: 'sandbox' or 'node'.
  custody    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, currency)
);
-- An incoming transfer is matched to its account by (currency, address, memo).
CREATE UNIQUE INDEX deposit_addresses_lookup ON deposit_addresses (currency, address, (coalesce(memo, '')));

CREATE TABLE deposits (
  id                serial PRIMARY KEY,
  account_id        integer NOT NULL REFERENCES accounts(id),
  currency          text NOT NULL REFERENCES currencies(code),
  amount            numeric(78, 0) NOT NULL CHECK (amount > 0),
  -- pending: seen, waiting for confirmations (crypto) or for the payment (fiat);
  -- credited: the ledger entry is posted (shown as done); below_minimum: recorded, never credited;
  -- orphaned: the transaction left the chain before it was confirmed; canceled: given up (fiat).
  status            text NOT NULL CHECK (status IN ('pending', 'credited', 'below_minimum', 'orphaned', 'canceled')),
  -- Fiat service code; null for crypto.
  provider          text,
  -- Crypto only: where it was paid, the transaction and output, confirmations last seen.
  address           text,
  memo              text,
  txid              text,
  output_index      integer,
  confirmations     integer,
  -- Fiat only: the gateway's id of the payment and the reference given to it.
  external_id       text,
  reference_id      text,
  credited_entry_id bigint,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  credited_at       timestamptz,
  CHECK (provider IS NOT NULL OR (txid IS NOT NULL AND output_index IS NOT NULL AND address IS NOT NULL))
);
-- A crypto deposit is one output of one transaction: recorded (and so credited) once.
CREATE UNIQUE INDEX deposits_output ON deposits (currency, txid, output_index);
CREATE INDEX deposits_account ON deposits (account_id, created_at);
CREATE INDEX deposits_pending ON deposits (currency) WHERE status = 'pending';
