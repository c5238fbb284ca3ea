-- Foreign keys checked per row at the end of the order writer's batch statement cost about a third
-- of PostgreSQL's work per order (bench:e2e, PostgreSQL CPU per order 84-92 µs with them, 60-66 µs
-- without): a batch of 20 orders inserts about 45 journal legs with three checks each and 20 orders
-- with one. They hold by construction instead, and reconciliation (src/ledger/reconcile.ts) proves it:
-- - a leg is inserted only by the statement that inserts its entry (postingCtes, `l` from `e`);
-- - a leg's account and currency are those of a balance row the same statement upserts, and balance
--   rows keep their foreign keys to accounts and currencies; accounts, currencies and balances are
--   never deleted;
-- - an order is accepted only from an authenticated account, with funds locked in its balance.
-- Reconciliation reports any leg without its entry or balance row and any order without its account.
ALTER TABLE journal_legs DROP CONSTRAINT journal_legs_entry_id_fkey;
ALTER TABLE journal_legs DROP CONSTRAINT journal_legs_account_id_fkey;
ALTER TABLE journal_legs DROP CONSTRAINT journal_legs_currency_fkey;
ALTER TABLE orders DROP CONSTRAINT orders_account_id_fkey;
