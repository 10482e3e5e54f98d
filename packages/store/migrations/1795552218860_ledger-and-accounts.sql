-- Up Migration

-- Accounts, their keys (SHA-256 only) and limit overrides: the source of truth; Redis keeps the hot
-- copy the atomic reserve needs (packages/store/src/pg/accounts.ts owns these tables).
CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL,
  -- Limit overrides by field (LIMIT_FIELDS' names in Redis): absent ones follow the deployment defaults.
  limits      jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE TABLE api_keys (
  sha256      text PRIMARY KEY,
  -- The key's public id (its first 12 characters).
  id          text NOT NULL,
  account_id  text NOT NULL REFERENCES accounts (id),
  label       text NOT NULL,
  created_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Every credit movement (packages/store/src/pg/ledger.ts owns this table). Written by the drainer
-- from the Redis stream the settlement scripts append to; `entry_key` makes the insert idempotent:
-- `<type>:<job id>` for charges and refunds (one per job and type), `grant:<grant id>` for grants.
CREATE TABLE ledger (
  seq         bigserial PRIMARY KEY,
  entry_key   text NOT NULL UNIQUE,
  account_id  text NOT NULL,
  type        text NOT NULL CHECK (type IN ('grant', 'charge', 'refund')),
  credits     integer NOT NULL CHECK (credits >= 0),
  at          timestamptz NOT NULL,
  job_id      text,
  endpoint    text,
  pack        text,
  grant_id    text,
  -- Credits the job's price asked for but the balance could not cover.
  uncharged   integer,
  cache_hit   boolean NOT NULL DEFAULT false
);
CREATE INDEX ledger_account_at ON ledger (account_id, at);

-- Down Migration
DROP TABLE ledger;
DROP TABLE api_keys;
DROP TABLE accounts;
