-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "cancel_reason" TEXT,
ADD COLUMN     "cancelled_by" TEXT;

