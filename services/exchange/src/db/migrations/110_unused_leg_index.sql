-- journal_legs_account (account_id, currency) is written for every leg of every order batch (about
-- two legs per order, bench:e2e) and read by no query: the only reader of legs by account is the
-- reconciliation (src/ledger/reconcile.ts), which sums every leg of the table at once and scans it
-- whole with or without the index. Issue 46: an index entry less per leg on the order writer's path.
-- journal_legs_entry stays (the reconciliation's per-entry checks, deleting an entry's legs).
DROP INDEX IF EXISTS journal_legs_account;
