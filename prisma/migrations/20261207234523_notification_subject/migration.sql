-- DropIndex
DROP INDEX "notification_deliveries_session_id_target_event_key";

-- AlterTable
ALTER TABLE "notification_deliveries" ADD COLUMN     "subject" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE UNIQUE INDEX "notification_deliveries_session_id_target_event_subject_key" ON "notification_deliveries"("session_id", "target", "event", "subject");

