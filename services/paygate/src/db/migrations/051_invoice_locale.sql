-- The payer's language the merchant chose for the hosted page (`uk`, `ru`, `en`); null: the
-- browser's Accept-Language decides.
ALTER TABLE invoices ADD COLUMN locale text;
