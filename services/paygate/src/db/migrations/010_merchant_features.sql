-- Idempotency-Key on merchant POSTs (src/idempotency/): the first answer under a key is kept for
-- 24 h and replayed; `status` is null while the first request still runs (until `locked_until`).
CREATE TABLE idempotency_keys (
  merchant_id text NOT NULL,
  key text NOT NULL,
  route text NOT NULL,
  fingerprint text NOT NULL,
  status integer,
  response text,
  content_type text,
  locked_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Refunds of paid invoices (src/refunds/); settled by the sandbox processor after `settle_at`.
CREATE TABLE refunds (
  id text PRIMARY KEY,
  merchant_id text NOT NULL,
  reference_id text NOT NULL,
  invoice_id text NOT NULL REFERENCES invoices (id),
  currency text NOT NULL,
  amount numeric(20, 2) NOT NULL CHECK (amount > 0),
  settle_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('processing', 'success', 'failed')),
  failure_reason text,
  test_mode boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (merchant_id, reference_id)
);
CREATE INDEX refunds_of_invoice ON refunds (invoice_id);
CREATE INDEX refunds_due ON refunds (settle_at) WHERE status = 'processing';

-- Callbacks: refunds too; a per-object `sequence`; a merchant-wide `position` given after commit, in
-- the order events become visible (src/events/); a dead-letter state after too many attempts.
ALTER TABLE callback_outbox DROP CONSTRAINT callback_outbox_object_type_check;
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_object_type_check
  CHECK (object_type IN ('invoice', 'payout', 'refund'));
ALTER TABLE callback_outbox ADD COLUMN sequence integer NOT NULL DEFAULT 1;
ALTER TABLE callback_outbox ADD COLUMN position bigint UNIQUE;
ALTER TABLE callback_outbox ADD COLUMN dead_at timestamptz;
CREATE SEQUENCE callback_position;
CREATE INDEX callback_outbox_object_sequence ON callback_outbox (object_type, object_id, sequence);
CREATE INDEX callback_outbox_unpositioned ON callback_outbox (id) WHERE position IS NULL;
CREATE INDEX callback_outbox_by_position ON callback_outbox (merchant_id, position);
CREATE INDEX callback_outbox_dead ON callback_outbox (dead_at) WHERE dead_at IS NOT NULL AND delivered_at IS NULL;
DROP INDEX callback_outbox_pending;
CREATE INDEX callback_outbox_pending ON callback_outbox (next_attempt_at) WHERE delivered_at IS NULL AND dead_at IS NULL;

-- Merchant secrets rotated at run time (src/secrets/): the current one signs callbacks; the previous
-- one is still accepted on merchant API calls until `previous_until`.
CREATE TABLE merchant_secrets (
  merchant_id text PRIMARY KEY,
  secret text NOT NULL,
  previous_secret text,
  previous_until timestamptz,
  rotated_at timestamptz NOT NULL
);
