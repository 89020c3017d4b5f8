-- This is an empty migration.

-- tarsy:custom
-- Fair admission across alert types (see packages/db/src/admission.ts). Every object below is
-- named so the schema-agreement test can tell it apart from what Prisma generates.

-- The oldest pending session of each alert type, and the per-type pending count at intake.
CREATE INDEX "alert_sessions_pending_by_type_idx" ON "alert_sessions" ("alert_type", "created_at", "id") WHERE "status" = 'pending' AND "deleted_at" IS NULL;
-- Running sessions per alert type.
CREATE INDEX "alert_sessions_running_by_type_idx" ON "alert_sessions" ("alert_type") WHERE "status" IN ('in_progress', 'cancelling') AND "deleted_at" IS NULL;
-- When each alert type was last admitted (round-robin between types with equal running counts).
CREATE INDEX "alert_sessions_started_by_type_idx" ON "alert_sessions" ("alert_type", "started_at") WHERE "started_at" IS NOT NULL;
