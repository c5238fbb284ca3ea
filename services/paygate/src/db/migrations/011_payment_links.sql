-- Payment links (src/links/): an address a merchant can mail to the payer, opening the invoice's
-- hosted page once, until it expires.
CREATE TABLE payment_links (
  token text PRIMARY KEY,
  merchant_id text NOT NULL,
  invoice_id text NOT NULL REFERENCES invoices (id),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
