-- AlterTable
ALTER TABLE "action_requests" ADD COLUMN     "dry_run_result" TEXT,
ADD COLUMN     "dry_run_status" TEXT;

