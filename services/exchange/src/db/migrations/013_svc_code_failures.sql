-- Failed transfer-code redemptions counted per account and per client address (brute-force
-- protection). One row per subject and fixed window; shared by every instance on the database and
-- kept across restarts. Rows of windows that ended are overwritten by the next failure.
CREATE TABLE svc_code_failures (
  -- 'account' (subject = account id) or 'address' (subject = client IP address).
  kind         text NOT NULL CHECK (kind IN ('account', 'address')),
  subject      text NOT NULL,
  window_start timestamptz NOT NULL,
  failures     integer NOT NULL CHECK (failures >= 0),
  PRIMARY KEY (kind, subject)
);
