-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "session_status" AS ENUM ('pending', 'in_progress', 'cancelling', 'completed', 'failed', 'cancelled', 'timed_out');

-- CreateEnum
CREATE TYPE "execution_status" AS ENUM ('pending', 'active', 'completed', 'failed', 'cancelled', 'timed_out');

-- CreateEnum
CREATE TYPE "parallel_type" AS ENUM ('multi_agent', 'replica');

-- CreateEnum
CREATE TYPE "success_policy" AS ENUM ('all', 'any');

-- CreateEnum
CREATE TYPE "stage_kind" AS ENUM ('investigation', 'synthesis', 'chat');

-- CreateEnum
CREATE TYPE "execution_kind" AS ENUM ('investigation', 'synthesis', 'chat', 'executive_summary');

-- CreateEnum
CREATE TYPE "timeline_event_type" AS ENUM ('llm_thinking', 'llm_response', 'llm_tool_call', 'mcp_tool_summary', 'error', 'user_question', 'executive_summary', 'final_analysis', 'code_execution', 'google_search_result', 'url_context_result');

-- CreateEnum
CREATE TYPE "timeline_event_status" AS ENUM ('streaming', 'completed', 'failed', 'cancelled', 'timed_out');

-- CreateEnum
CREATE TYPE "message_role" AS ENUM ('system', 'user', 'assistant', 'tool');

-- CreateEnum
CREATE TYPE "llm_interaction_type" AS ENUM ('iteration', 'final_analysis', 'forced_conclusion', 'summarization', 'synthesis', 'executive_summary', 'chat_response');

-- CreateEnum
CREATE TYPE "mcp_interaction_type" AS ENUM ('tool_call', 'tool_list');

-- CreateTable
CREATE TABLE "alert_sessions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "alert_data" TEXT NOT NULL,
    "alert_type" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "agent_type" TEXT,
    "status" "session_status" NOT NULL DEFAULT 'pending',
    "pod_id" TEXT,
    "author" TEXT,
    "runbook_url" TEXT,
    "mcp_selection" JSONB,
    "final_analysis" TEXT,
    "executive_summary" TEXT,
    "executive_summary_error" TEXT,
    "error_message" TEXT,
    "current_stage_index" INTEGER,
    "current_stage_name" TEXT,
    "timeline_sequence" INTEGER NOT NULL DEFAULT 0,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "thinking_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_tokens" INTEGER NOT NULL DEFAULT 0,
    "alert_fingerprint" TEXT,
    "alert_group_key" TEXT,
    "alert_labels" JSONB,
    "alert_resolved_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),
    "last_interaction_at" TIMESTAMPTZ(6),
    "deadline_at" TIMESTAMPTZ(6),
    "deleted_at" TIMESTAMPTZ(6),

    CONSTRAINT "alert_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stages" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_name" TEXT NOT NULL,
    "stage_index" INTEGER NOT NULL,
    "kind" "stage_kind" NOT NULL DEFAULT 'investigation',
    "expected_agent_count" INTEGER NOT NULL DEFAULT 1,
    "parallel_type" "parallel_type",
    "success_policy" "success_policy",
    "chat_id" UUID,
    "chat_user_message_id" UUID,
    "status" "execution_status" NOT NULL DEFAULT 'pending',
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),

    CONSTRAINT "stages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_executions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "stage_id" UUID,
    "session_id" UUID NOT NULL,
    "agent_name" TEXT NOT NULL,
    "agent_index" INTEGER NOT NULL DEFAULT 1,
    "kind" "execution_kind" NOT NULL DEFAULT 'investigation',
    "iteration_strategy" TEXT,
    "backend" TEXT,
    "llm_provider" TEXT,
    "status" "execution_status" NOT NULL DEFAULT 'pending',
    "error_message" TEXT,
    "final_analysis" TEXT,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "thinking_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_tokens" INTEGER NOT NULL DEFAULT 0,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "runner_id" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),
    "last_heartbeat_at" TIMESTAMPTZ(6),

    CONSTRAINT "agent_executions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "timeline_events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "execution_id" UUID,
    "sequence_number" INTEGER NOT NULL,
    "event_type" "timeline_event_type" NOT NULL,
    "status" "timeline_event_status" NOT NULL DEFAULT 'streaming',
    "content" TEXT NOT NULL DEFAULT '',
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "timeline_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "execution_id" UUID NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "role" "message_role" NOT NULL,
    "content" TEXT NOT NULL,
    "tool_calls" JSONB,
    "tool_call_id" TEXT,
    "tool_name" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "llm_interactions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "execution_id" UUID,
    "interaction_type" "llm_interaction_type" NOT NULL,
    "model_name" TEXT NOT NULL,
    "provider" TEXT,
    "iteration" INTEGER,
    "last_message_id" UUID,
    "llm_request" JSONB,
    "response_text" TEXT,
    "thinking_content" TEXT,
    "tool_calls" JSONB,
    "response_metadata" JSONB,
    "input_tokens" INTEGER,
    "output_tokens" INTEGER,
    "thinking_tokens" INTEGER,
    "total_tokens" INTEGER,
    "duration_ms" INTEGER,
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "llm_interactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mcp_interactions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "execution_id" UUID,
    "interaction_type" "mcp_interaction_type" NOT NULL,
    "server_name" TEXT NOT NULL,
    "tool_name" TEXT,
    "tool_arguments" JSONB,
    "tool_result" JSONB,
    "available_tools" JSONB,
    "duration_ms" INTEGER,
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_interactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chats" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_interaction_at" TIMESTAMPTZ(6),

    CONSTRAINT "chats_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_user_messages" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "chat_id" UUID NOT NULL,
    "content" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_user_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" BIGSERIAL NOT NULL,
    "message_key" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "msg_id" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(6),

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "alert_sessions_status_created_at_idx" ON "alert_sessions"("status", "created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_alert_type_created_at_idx" ON "alert_sessions"("alert_type", "created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_chain_id_created_at_idx" ON "alert_sessions"("chain_id", "created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_created_at_idx" ON "alert_sessions"("created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_deleted_at_idx" ON "alert_sessions"("deleted_at");

-- CreateIndex
CREATE INDEX "alert_sessions_alert_fingerprint_idx" ON "alert_sessions"("alert_fingerprint");

-- CreateIndex
CREATE INDEX "alert_sessions_alert_group_key_idx" ON "alert_sessions"("alert_group_key");

-- CreateIndex
CREATE UNIQUE INDEX "stages_chat_user_message_id_key" ON "stages"("chat_user_message_id");

-- CreateIndex
CREATE INDEX "stages_chat_id_idx" ON "stages"("chat_id");

-- CreateIndex
CREATE UNIQUE INDEX "stages_session_id_stage_index_key" ON "stages"("session_id", "stage_index");

-- CreateIndex
CREATE INDEX "agent_executions_session_id_created_at_idx" ON "agent_executions"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "agent_executions_status_last_heartbeat_at_idx" ON "agent_executions"("status", "last_heartbeat_at");

-- CreateIndex
CREATE UNIQUE INDEX "agent_executions_stage_id_agent_index_key" ON "agent_executions"("stage_id", "agent_index");

-- CreateIndex
CREATE INDEX "timeline_events_execution_id_sequence_number_idx" ON "timeline_events"("execution_id", "sequence_number");

-- CreateIndex
CREATE INDEX "timeline_events_stage_id_idx" ON "timeline_events"("stage_id");

-- CreateIndex
CREATE UNIQUE INDEX "timeline_events_session_id_sequence_number_key" ON "timeline_events"("session_id", "sequence_number");

-- CreateIndex
CREATE INDEX "messages_session_id_idx" ON "messages"("session_id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_execution_id_sequence_number_key" ON "messages"("execution_id", "sequence_number");

-- CreateIndex
CREATE INDEX "llm_interactions_execution_id_created_at_idx" ON "llm_interactions"("execution_id", "created_at");

-- CreateIndex
CREATE INDEX "llm_interactions_session_id_created_at_idx" ON "llm_interactions"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "mcp_interactions_execution_id_created_at_idx" ON "mcp_interactions"("execution_id", "created_at");

-- CreateIndex
CREATE INDEX "mcp_interactions_session_id_created_at_idx" ON "mcp_interactions"("session_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "chats_session_id_key" ON "chats"("session_id");

-- CreateIndex
CREATE INDEX "chat_user_messages_chat_id_created_at_idx" ON "chat_user_messages"("chat_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_messages_published_at_id_idx" ON "outbox_messages"("published_at", "id");

-- AddForeignKey
ALTER TABLE "stages" ADD CONSTRAINT "stages_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stages" ADD CONSTRAINT "stages_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stages" ADD CONSTRAINT "stages_chat_user_message_id_fkey" FOREIGN KEY ("chat_user_message_id") REFERENCES "chat_user_messages"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_executions" ADD CONSTRAINT "agent_executions_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_executions" ADD CONSTRAINT "agent_executions_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "timeline_events" ADD CONSTRAINT "timeline_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "timeline_events" ADD CONSTRAINT "timeline_events_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "timeline_events" ADD CONSTRAINT "timeline_events_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "agent_executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "agent_executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_interactions" ADD CONSTRAINT "llm_interactions_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_interactions" ADD CONSTRAINT "llm_interactions_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_interactions" ADD CONSTRAINT "llm_interactions_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "agent_executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_interactions" ADD CONSTRAINT "llm_interactions_last_message_id_fkey" FOREIGN KEY ("last_message_id") REFERENCES "messages"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_interactions" ADD CONSTRAINT "mcp_interactions_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_interactions" ADD CONSTRAINT "mcp_interactions_stage_id_fkey" FOREIGN KEY ("stage_id") REFERENCES "stages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_interactions" ADD CONSTRAINT "mcp_interactions_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "agent_executions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chats" ADD CONSTRAINT "chats_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chat_user_messages" ADD CONSTRAINT "chat_user_messages_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- tarsy:custom
-- SQL that schema.prisma cannot express. Every object below is named so the
-- schema-agreement test can tell it apart from what Prisma generates.

-- Free-text search over alert data and analyses (ILIKE '%term%' uses these).
CREATE EXTENSION IF NOT EXISTS "pg_trgm";
CREATE INDEX "alert_sessions_alert_data_trgm_idx" ON "alert_sessions" USING GIN ("alert_data" gin_trgm_ops);
CREATE INDEX "alert_sessions_final_analysis_trgm_idx" ON "alert_sessions" USING GIN ("final_analysis" gin_trgm_ops);
CREATE INDEX "alert_sessions_executive_summary_trgm_idx" ON "alert_sessions" USING GIN ("executive_summary" gin_trgm_ops);

-- One active turn per chat: at most one chat stage that is pending or active.
CREATE UNIQUE INDEX "stages_one_active_chat_turn_key" ON "stages" ("chat_id") WHERE "chat_id" IS NOT NULL AND "status" IN ('pending', 'active');

-- One executive summary execution per session (idempotent under redelivery).
CREATE UNIQUE INDEX "agent_executions_one_executive_summary_key" ON "agent_executions" ("session_id") WHERE "kind" = 'executive_summary';

-- Pending-session FIFO and the outbox relay scan only the rows still waiting.
CREATE INDEX "alert_sessions_pending_fifo_idx" ON "alert_sessions" ("created_at", "id") WHERE "status" = 'pending' AND "deleted_at" IS NULL;
CREATE INDEX "outbox_messages_unpublished_idx" ON "outbox_messages" ("id") WHERE "published_at" IS NULL;
