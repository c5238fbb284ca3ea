-- Refunds of fiat deposits started by the operator (src/fiat/refunds/): the owner's balance is locked
-- first (ledger key fiat-refund-lock:<id>), then the gateway is asked to refund the invoice; the
-- refund's callback settles the locked funds to the external account or gives them back.
CREATE TABLE fiat_refunds (
  id          serial PRIMARY KEY,
  deposit_id  integer NOT NULL UNIQUE REFERENCES deposits(id),
  account_id  integer NOT NULL REFERENCES accounts(id),
  currency    text NOT NULL REFERENCES currencies(code),
  amount      numeric(78, 0) NOT NULL CHECK (amount > 0),
  -- sending: funds locked, the gateway asked (again until it answers); done: refunded; failed: funds back.
  status      text NOT NULL CHECK (status IN ('sending', 'done', 'failed')),
  gateway_id  text,
  failure     text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Refund callbacks the exchange did not start (no fiat_refunds row): recorded for the operator
-- (`npm run admin -w services/exchange -- fiat unsolicited`), never applied to a balance.
CREATE TABLE paygate_unsolicited_refunds (
  gateway_id            text NOT NULL,
  event_id              text NOT NULL,
  reference_id          text NOT NULL,
  invoice_reference_id  text,
  status                text NOT NULL,
  currency              text NOT NULL,
  amount                text NOT NULL,
  body                  jsonb NOT NULL,
  received_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (gateway_id, event_id)
);

ALTER TABLE paygate_events DROP CONSTRAINT paygate_events_object_check;
ALTER TABLE paygate_events ADD CONSTRAINT paygate_events_object_check
  CHECK (object IN ('invoice', 'payout', 'refund'));
