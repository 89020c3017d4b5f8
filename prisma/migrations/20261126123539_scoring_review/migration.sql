-- CreateEnum
CREATE TYPE "scoring_status" AS ENUM ('in_progress', 'completed', 'failed');

-- CreateEnum
CREATE TYPE "review_status" AS ENUM ('needs_review', 'in_progress', 'reviewed');

-- CreateEnum
CREATE TYPE "quality_rating" AS ENUM ('accurate', 'partially_accurate', 'inaccurate');

-- CreateEnum
CREATE TYPE "review_action" AS ENUM ('claim', 'unclaim', 'complete', 'reopen', 'update_feedback', 'acknowledge');

-- AlterEnum
ALTER TYPE "stage_kind" ADD VALUE 'scoring';

-- AlterEnum
ALTER TYPE "execution_kind" ADD VALUE 'scoring';

-- AlterEnum
ALTER TYPE "llm_interaction_type" ADD VALUE 'scoring';

-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "action_taken" TEXT,
ADD COLUMN     "assigned_at" TIMESTAMPTZ(6),
ADD COLUMN     "assignee" TEXT,
ADD COLUMN     "investigation_feedback" TEXT,
ADD COLUMN     "quality_rating" "quality_rating",
ADD COLUMN     "review_status" "review_status",
ADD COLUMN     "reviewed_at" TIMESTAMPTZ(6);

-- CreateTable
CREATE TABLE "session_scores" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "status" "scoring_status" NOT NULL DEFAULT 'in_progress',
    "total_score" INTEGER,
    "score_analysis" TEXT,
    "tool_improvement_report" TEXT,
    "failure_tags" JSONB,
    "prompt_hash" TEXT NOT NULL,
    "score_triggered_by" TEXT NOT NULL,
    "error_message" TEXT,
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(6),

    CONSTRAINT "session_scores_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session_review_activities" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "actor" TEXT NOT NULL,
    "action" "review_action" NOT NULL,
    "from_status" "review_status",
    "to_status" "review_status" NOT NULL,
    "quality_rating" "quality_rating",
    "note" TEXT,
    "investigation_feedback" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_review_activities_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "session_scores_stage_id_key" ON "session_scores"("stage_id");

-- CreateIndex
CREATE INDEX "session_scores_session_id_started_at_idx" ON "session_scores"("session_id", "started_at");

-- CreateIndex
CREATE INDEX "session_review_activities_session_id_created_at_idx" ON "session_review_activities"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_review_status_completed_at_idx" ON "alert_sessions"("review_status", "completed_at");

-- CreateIndex
CREATE INDEX "alert_sessions_review_status_assignee_idx" ON "alert_sessions"("review_status", "assignee");

-- AddForeignKey
ALTER TABLE "session_scores" ADD CONSTRAINT "session_scores_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "session_scores" ADD CONSTRAINT "session_scores_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "session_review_activities" ADD CONSTRAINT "session_review_activities_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- tarsy:custom
-- At most one score in progress per session: a second request conflicts (409).
CREATE UNIQUE INDEX "session_scores_one_in_progress" ON "session_scores"("session_id") WHERE "status" = 'in_progress';

-- Review history is append-only: rows are never changed (they go only with their session).
CREATE FUNCTION "session_review_activities_no_update"() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'session_review_activities is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER "session_review_activities_no_update" BEFORE UPDATE ON "session_review_activities"
  FOR EACH ROW EXECUTE FUNCTION "session_review_activities_no_update"();

-- Sessions that ended before the review workflow existed start as reviewed (the Go TARSy's
-- backfill): only new investigations enter the review queue.
UPDATE "alert_sessions"
   SET "review_status" = 'reviewed', "reviewed_at" = COALESCE("completed_at", CURRENT_TIMESTAMP)
 WHERE "status" IN ('completed', 'failed', 'cancelled', 'timed_out') AND "review_status" IS NULL;
