-- AlterEnum
ALTER TYPE "timeline_event_type" ADD VALUE 'execution_resumed';

