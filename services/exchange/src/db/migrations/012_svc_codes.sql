-- Transfer codes (svc_codes): a code holds its amount in escrow until it is redeemed or cancelled.

-- The escrow system account: creating a code moves its amount here from the owner's available
-- balance; redeeming moves it to the redeemer, cancelling back to the owner. It may not go negative,
-- and per currency its balance equals the sum of the live codes (active, unconfirmed, onhold).
INSERT INTO accounts (kind, system_code, svcid, may_go_negative, announcements)
VALUES ('system', 'svc_codes', 'system-svc-codes', false, false);

CREATE TABLE svc_codes (
  id                    serial PRIMARY KEY,
  -- Reference to quote to support (random, not the secret).
  sn                    text NOT NULL UNIQUE,
  owner_id              integer NOT NULL REFERENCES accounts(id),
  -- Segment 1 of the code: public (the check method looks codes up by it), unique among codes.
  public_segment        text NOT NULL UNIQUE,
  -- HMAC-SHA256 of the 45-character body under a key derived from the master key: redemption finds
  -- the code by it; the code itself is never stored in the clear.
  code_hash             text NOT NULL UNIQUE,
  -- The whole code, AES-256-GCM under the master key, the public segment as associated data.
  code_box              text NOT NULL,
  -- svcid of the only account that may redeem it, or 'all'.
  recipient             text NOT NULL DEFAULT 'all',
  currency              text NOT NULL REFERENCES currencies(code),
  -- Minor units of the currency (ledger precision), as the ledger stores them.
  amount                numeric(78, 0) NOT NULL CHECK (amount > 0),
  status                text NOT NULL CHECK (status IN
                          ('created', 'processing', 'unconfirmed', 'active', 'redeeming', 'redeemed', 'onhold', 'canceled')),
  -- Status to return to when an operator releases a code put on hold.
  held_from             text CHECK (held_from IN ('unconfirmed', 'active')),
  non_refundable_before timestamptz NOT NULL,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  redeemed_at           timestamptz,
  redeemer_id           integer REFERENCES accounts(id),
  canceled_at           timestamptz,
  comment               text NOT NULL DEFAULT '',
  private_comment       text NOT NULL DEFAULT '',
  CHECK ((status = 'redeemed') = (redeemer_id IS NOT NULL AND redeemed_at IS NOT NULL)),
  CHECK ((status = 'onhold') = (held_from IS NOT NULL))
);
CREATE INDEX svc_codes_owner ON svc_codes(owner_id, created_at);
CREATE INDEX svc_codes_redeemer ON svc_codes(redeemer_id, redeemed_at) WHERE redeemer_id IS NOT NULL;
