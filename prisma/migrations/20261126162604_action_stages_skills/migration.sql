-- AlterEnum
ALTER TYPE "stage_kind" ADD VALUE 'action';

-- AlterEnum
ALTER TYPE "execution_kind" ADD VALUE 'action';

-- AlterEnum
ALTER TYPE "timeline_event_type" ADD VALUE 'skill_loaded';

-- AlterTable
ALTER TABLE "stages" ADD COLUMN     "actions_executed" BOOLEAN;

