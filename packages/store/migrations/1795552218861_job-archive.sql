-- Up Migration

-- Final jobs past their hot window in Redis (JOB_HOT_SECONDS), kept until JOB_RETENTION_SECONDS
-- (packages/store/src/pg/archive.ts owns this table). `record` is the whole stored record, as
-- JobStore reads it from Redis; PostgreSQL compresses it (TOAST, lz4 where the server has it).
CREATE TABLE job_archive (
  id            text PRIMARY KEY,
  account_id    text NOT NULL,
  endpoint      text NOT NULL,
  status        text NOT NULL,
  created_at    timestamptz NOT NULL,
  completed_at  timestamptz,
  expires_at    timestamptz NOT NULL,
  record        jsonb NOT NULL
);
CREATE INDEX job_archive_expires ON job_archive (expires_at);
CREATE INDEX job_archive_account_created ON job_archive (account_id, created_at);

DO $$
BEGIN
  ALTER TABLE job_archive ALTER COLUMN record SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  -- A server built without lz4 keeps the default (pglz): still compressed.
  NULL;
END $$;

-- Down Migration
DROP TABLE job_archive;
