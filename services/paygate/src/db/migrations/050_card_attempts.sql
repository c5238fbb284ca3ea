-- A declined card leaves the invoice open for another card (src/domain/card-attempts.ts):
-- how many cards the payer tried, and why the last one did not pay (shown on the card page).
ALTER TABLE invoices ADD COLUMN card_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN last_attempt_failure text;
