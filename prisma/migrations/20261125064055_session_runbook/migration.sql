-- CreateEnum
CREATE TYPE "runbook_source" AS ENUM ('fetched', 'default', 'none');

-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "runbook_content" TEXT,
ADD COLUMN     "runbook_error" TEXT,
ADD COLUMN     "runbook_resolved_at" TIMESTAMPTZ(6),
ADD COLUMN     "runbook_source" "runbook_source";

