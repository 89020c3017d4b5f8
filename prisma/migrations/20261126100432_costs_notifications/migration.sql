-- CreateEnum
CREATE TYPE "cost_status" AS ENUM ('priced', 'unpriced', 'disabled');

-- CreateEnum
CREATE TYPE "notification_status" AS ENUM ('sending', 'sent', 'failed');

-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "slack_message_fingerprint" TEXT;

-- AlterTable
ALTER TABLE "llm_interactions" ADD COLUMN     "cost_rate_source" TEXT,
ADD COLUMN     "cost_status" "cost_status",
ADD COLUMN     "estimated_cost_usd" DOUBLE PRECISION;

-- CreateTable
CREATE TABLE "notification_deliveries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "target" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "status" "notification_status" NOT NULL DEFAULT 'sending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "claimed_by" TEXT,
    "lease_until" TIMESTAMPTZ(6),
    "thread_ts" TEXT,
    "message_ts" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(6),

    CONSTRAINT "notification_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "notification_deliveries_session_id_target_event_key" ON "notification_deliveries"("session_id", "target", "event");

-- CreateIndex
CREATE INDEX "llm_interactions_created_at_idx" ON "llm_interactions"("created_at");

-- AddForeignKey
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

