-- Wallet (issue 14): custody state.
-- custody_cursors: where each currency's incoming-transaction scan resumes (a node's block hash,
-- the sandbox's sequence number), so a scan costs O(new transactions), not O(history).
CREATE TABLE custody_cursors (
  currency   text PRIMARY KEY,
  cursor     text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The sandbox custody's simulated chain: deposits arrive and confirm through operator commands,
-- withdrawals complete on their own after a delay. Amounts are decimal text in whole coins.
CREATE TABLE sandbox_transfers (
  seq           bigserial PRIMARY KEY,
  txid          text NOT NULL UNIQUE,
  currency      text NOT NULL,
  direction     text NOT NULL CHECK (direction IN ('in', 'out')),
  address       text NOT NULL,
  memo          text,
  amount        numeric NOT NULL CHECK (amount > 0),
  confirmations integer NOT NULL DEFAULT 0,
  -- Outgoing only: the sender's durable tag (one transfer per tag) and when it completes.
  tag           text UNIQUE,
  completes_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_transfers_incoming ON sandbox_transfers (currency, seq) WHERE direction = 'in';
