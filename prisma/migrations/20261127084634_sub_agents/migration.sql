-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "timeline_event_type" ADD VALUE 'task_assigned';
ALTER TYPE "timeline_event_type" ADD VALUE 'sub_agent_result';

-- DropIndex
DROP INDEX "agent_executions_stage_id_agent_index_key";

-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "dispatch_key" TEXT,
ADD COLUMN     "parent_execution_id" UUID,
ADD COLUMN     "result_delivered_at" TIMESTAMPTZ(6),
ADD COLUMN     "resume_request" JSONB,
ADD COLUMN     "suspended_at" TIMESTAMPTZ(6),
ADD COLUMN     "task" TEXT;

-- CreateIndex
CREATE INDEX "agent_executions_parent_execution_id_idx" ON "agent_executions"("parent_execution_id");

-- AddForeignKey
ALTER TABLE "agent_executions" ADD CONSTRAINT "agent_executions_parent_execution_id_fkey" FOREIGN KEY ("parent_execution_id") REFERENCES "agent_executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- tarsy:custom
-- One row per agent position among a stage's own agents; sub-agents share their parent's
-- stage and are keyed by the dispatch that created them.
CREATE UNIQUE INDEX "agent_executions_top_level_agent_key" ON "agent_executions"("stage_id", "agent_index")
  WHERE "parent_execution_id" IS NULL;
CREATE UNIQUE INDEX "agent_executions_dispatch_key" ON "agent_executions"("parent_execution_id", "dispatch_key")
  WHERE "parent_execution_id" IS NOT NULL;
