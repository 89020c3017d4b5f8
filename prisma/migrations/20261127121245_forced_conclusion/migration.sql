-- AlterTable
ALTER TABLE "agent_executions" ADD COLUMN     "forced_conclusion" TEXT;

