-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "continuity" JSONB;

