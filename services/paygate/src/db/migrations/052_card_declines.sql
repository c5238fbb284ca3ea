-- What the merchant sees of declined cards on an invoice (issue 33): the last decline's reason and
-- time, kept after a later card pays (last_attempt_failure is the page's and is cleared then).
ALTER TABLE invoices ADD COLUMN last_decline_reason text;
ALTER TABLE invoices ADD COLUMN last_decline_at timestamptz;
