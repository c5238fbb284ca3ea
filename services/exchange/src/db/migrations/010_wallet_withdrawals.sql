-- Wallet (issue 14): withdrawal requests, crypto and fiat (`rail`). Amounts are ledger minor units.
-- The request's funds are locked (available -> locked) in the transaction that inserts it: the lock
-- entry has the idempotency key `withdrawal-lock:<id>`; it is either released (`withdrawal-release:<id>`)
-- or settled to the external and fee accounts (`withdrawal-settle:<id>`), never both.

CREATE TABLE withdrawals (
  id                 serial PRIMARY KEY,
  account_id         integer NOT NULL REFERENCES accounts(id),
  currency           text NOT NULL REFERENCES currencies(code),
  rail               text NOT NULL CHECK (rail IN ('crypto', 'fiat')),
  -- Fiat service code (gateway); null for crypto.
  provider           text,
  -- Shown to the owner: an address, or a masked card number.
  destination        text NOT NULL,
  memo               text,
  -- Fiat only: the service fields, encrypted under the master key (SecretBox).
  details_box        text,
  -- What the recipient gets, the fee (in fee_currency) and what leaves the balance in `currency`.
  amount             numeric(78, 0) NOT NULL CHECK (amount > 0),
  fee                numeric(78, 0) NOT NULL CHECK (fee >= 0),
  fee_currency       text NOT NULL REFERENCES currencies(code),
  total_amount       numeric(78, 0) NOT NULL CHECK (total_amount >= amount),
  -- See the README (Wallet statuses) for the transitions.
  status             text NOT NULL CHECK (status IN (
                       'awaiting_confirmation', 'queued', 'sending', 'sent', 'done', 'canceled', 'expired', 'failed')),
  -- Durable tag handed to the custody (or gateway) with the send, to find the transfer after a crash.
  tag                text NOT NULL UNIQUE,
  -- The transaction id (crypto) or the gateway's payout id (fiat), once known.
  external_id        text,
  reference_id       text NOT NULL DEFAULT '',
  failure            text,
  -- An awaiting_confirmation request expires (funds released) after this time.
  confirm_expires_at timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  sent_at            timestamptz,
  finished_at        timestamptz
);
CREATE INDEX withdrawals_account ON withdrawals (account_id, created_at);
CREATE INDEX withdrawals_open ON withdrawals (status)
  WHERE status IN ('awaiting_confirmation', 'queued', 'sending', 'sent');
