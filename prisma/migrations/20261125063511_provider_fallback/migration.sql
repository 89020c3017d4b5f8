-- AlterEnum
ALTER TYPE "timeline_event_type" ADD VALUE 'provider_fallback';

-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "original_llm_backend" TEXT,
ADD COLUMN     "original_llm_provider" TEXT;

