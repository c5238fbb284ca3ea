-- Invoices created without the merchant's signature of the form (the spec's fiat deposit body, README
-- "Unsigned invoices"), counted per client address (an IPv6 address by its /64) in fixed windows of
-- UNSIGNED_INVOICES_WINDOW_SECONDS (src/unsigned-limit/): one row per address, its window's start
-- (Unix seconds of the gateway's clock) and count, shared by every gateway instance on the database.
-- Unlogged: a crash forgets the counts, which costs nothing but a fresh window.
CREATE UNLOGGED TABLE unsigned_invoice_counters (
  address      text   PRIMARY KEY,
  window_start bigint NOT NULL,
  count        integer NOT NULL
);
CREATE INDEX unsigned_invoice_counters_window ON unsigned_invoice_counters (window_start);
