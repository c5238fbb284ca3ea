-- Request-limit counters shared by every process on one database (src/limits/database-limiter.ts):
-- one row per rule and subject (client address or API key id), the current fixed window's start and
-- count in Unix seconds of the database's clock. Unlogged: counters need no crash safety (a crash
-- forgets them, as a restart of the in-process limiter does) and skip the WAL on every request.
CREATE UNLOGGED TABLE request_limit_counters (
  rule         text   NOT NULL,
  subject      text   NOT NULL,
  window_start bigint NOT NULL,
  window_end   bigint NOT NULL,
  count        bigint NOT NULL,
  PRIMARY KEY (rule, subject)
);
CREATE INDEX request_limit_counters_window_end ON request_limit_counters (window_end);
