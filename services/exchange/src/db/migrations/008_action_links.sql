-- Single-use confirm/cancel links sent by e-mail (src/mail/links.ts). Tokens are stored only as
-- keyed hashes; using either link of a pair sets used_at, which kills both.
CREATE TABLE action_links (
  id           bigserial PRIMARY KEY,
  purpose      text NOT NULL,
  subject_id   bigint NOT NULL,
  account_id   integer NOT NULL REFERENCES accounts(id),
  confirm_hash text NOT NULL UNIQUE,
  cancel_hash  text NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  used_action  text CHECK (used_action IN ('confirm', 'cancel')),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX action_links_subject ON action_links (purpose, subject_id) WHERE used_at IS NULL;
