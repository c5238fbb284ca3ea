-- Invoices (pay-ins through the hosted page). Amounts in the currency's units, two decimals.
-- The card is never stored: only its masked number and the processor's token.
CREATE TABLE invoices (
  id text PRIMARY KEY,
  merchant_id text NOT NULL,
  reference_id text NOT NULL,
  service text NOT NULL,
  currency text NOT NULL,
  amount numeric(20, 2) NOT NULL CHECK (amount > 0),
  fee numeric(20, 2) NOT NULL CHECK (fee >= 0),
  total numeric(20, 2) NOT NULL,
  description text NOT NULL,
  service_fields jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL CHECK (status IN ('created', 'processing', 'success', 'failed', 'expired')),
  card_masked text,
  processor_token text,
  failure_reason text,
  test_mode boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  UNIQUE (merchant_id, reference_id)
);
CREATE INDEX invoices_open_by_expiry ON invoices (expires_at) WHERE status IN ('created', 'processing');

-- Payouts to a card or wallet; settled by the payout processor after `settle_at`.
CREATE TABLE payouts (
  id text PRIMARY KEY,
  merchant_id text NOT NULL,
  reference_id text NOT NULL,
  service text NOT NULL,
  currency text NOT NULL,
  amount numeric(20, 2) NOT NULL CHECK (amount > 0),
  fee numeric(20, 2) NOT NULL CHECK (fee >= 0),
  destination_masked text NOT NULL,
  processor_token text NOT NULL,
  -- the sandbox processor's verdict, known to the processor at submission and revealed at settle_at
  pending_outcome text NOT NULL CHECK (pending_outcome IN ('success', 'failed')),
  pending_reason text,
  settle_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('processing', 'success', 'failed')),
  failure_reason text,
  test_mode boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (merchant_id, reference_id)
);
CREATE INDEX payouts_due ON payouts (settle_at) WHERE status = 'processing';

-- Callbacks to merchants: written in the transaction that changes the invoice or payout, delivered
-- by a background loop until a 2xx answers (src/callbacks/).
CREATE TABLE callback_outbox (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  merchant_id text NOT NULL,
  object_type text NOT NULL CHECK (object_type IN ('invoice', 'payout')),
  object_id text NOT NULL,
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  delivered_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL
);
CREATE INDEX callback_outbox_pending ON callback_outbox (next_attempt_at) WHERE delivered_at IS NULL;
CREATE INDEX callback_outbox_object ON callback_outbox (object_type, object_id, id) WHERE delivered_at IS NULL;
