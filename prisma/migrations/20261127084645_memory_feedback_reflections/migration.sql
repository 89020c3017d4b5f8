-- CreateEnum
CREATE TYPE "feedback_reflection_status" AS ENUM ('pending', 'running', 'completed', 'failed', 'skipped');

-- AlterEnum
ALTER TYPE "execution_kind" ADD VALUE 'feedback_reflection';

-- CreateTable
CREATE TABLE "memory_feedback_reflections" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "feedback" TEXT NOT NULL,
    "quality_rating" "quality_rating",
    "actor" TEXT NOT NULL,
    "status" "feedback_reflection_status" NOT NULL DEFAULT 'pending',
    "execution_id" UUID,
    "reason" TEXT,
    "memories_created" INTEGER NOT NULL DEFAULT 0,
    "memories_reinforced" INTEGER NOT NULL DEFAULT 0,
    "memories_deprecated" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "applied_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),

    CONSTRAINT "memory_feedback_reflections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "memory_feedback_reflections_idempotency_key_key" ON "memory_feedback_reflections"("idempotency_key");

-- CreateIndex
CREATE INDEX "memory_feedback_reflections_session_id_created_at_idx" ON "memory_feedback_reflections"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "memory_feedback_reflections_execution_id_idx" ON "memory_feedback_reflections"("execution_id");

-- AddForeignKey
ALTER TABLE "memory_feedback_reflections" ADD CONSTRAINT "memory_feedback_reflections_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

