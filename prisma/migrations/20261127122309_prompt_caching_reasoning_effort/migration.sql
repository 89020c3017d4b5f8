-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "original_reasoning_effort" TEXT,
ADD COLUMN     "reasoning_effort" TEXT;

-- AlterTable
ALTER TABLE "llm_interactions" ADD COLUMN     "cache_creation_tokens" INTEGER,
ADD COLUMN     "cache_read_tokens" INTEGER,
ADD COLUMN     "reasoning_effort" TEXT;

