-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "actions_executed" BOOLEAN;
