-- Results of ledger reconciliations (src/ledger/reconcile.ts) as they were run, newest last, so the
-- metrics listener can show the last one (exchange_ledger_reconcile_ok) and an alert can fire on it.
CREATE TABLE reconcile_runs (
  id       bigserial PRIMARY KEY,
  ran_at   timestamptz NOT NULL DEFAULT now(),
  ok       boolean NOT NULL,
  -- How many invariant violations were found (at most 100 are listed by the report).
  problems integer NOT NULL CHECK (problems >= 0)
);
