-- This is an empty migration.

-- tarsy:custom
-- The audit log is append-only: the row trigger of 20261126010734_authorization refuses UPDATE
-- and DELETE; TRUNCATE fires no row trigger, so a statement trigger refuses it too.
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"();
