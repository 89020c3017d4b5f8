-- AlterEnum
ALTER TYPE "stage_kind" ADD VALUE 'compose';

-- AlterEnum
ALTER TYPE "execution_kind" ADD VALUE 'compose';

-- AlterEnum
ALTER TYPE "llm_interaction_type" ADD VALUE 'composition';

