-- Fiat (payment gateway): every callback event applied, so a redelivered event is acknowledged
-- without being applied again (idempotent per object + gateway id + event). The money side is
-- idempotent by itself too (ledger idempotency keys of the deposit credit and withdrawal settle).
CREATE TABLE paygate_events (
  object       text NOT NULL CHECK (object IN ('invoice', 'payout')),
  gateway_id   text NOT NULL,
  event_id     text NOT NULL,
  reference_id text NOT NULL,
  status       text NOT NULL,
  -- What the exchange did with it: credited, canceled, settled, released, recorded, ignored.
  outcome      text NOT NULL,
  body         jsonb NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (object, gateway_id, event_id)
);
CREATE INDEX paygate_events_reference ON paygate_events (object, reference_id);
