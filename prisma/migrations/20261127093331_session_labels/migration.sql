-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "labels" JSONB;

-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "labels" JSONB;

-- tarsy:custom
-- The list's `?label=` filter is a containment test (labels @> '["noise"]').
CREATE INDEX "idx_alert_sessions_labels_gin" ON "alert_sessions" USING GIN ("labels" jsonb_path_ops);
