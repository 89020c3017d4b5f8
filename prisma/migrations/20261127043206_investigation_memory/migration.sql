-- CreateEnum
CREATE TYPE "memory_category" AS ENUM ('semantic', 'episodic', 'procedural');

-- CreateEnum
CREATE TYPE "memory_valence" AS ENUM ('positive', 'negative', 'neutral');

-- AlterEnum
ALTER TYPE "timeline_event_type" ADD VALUE 'memory_injected';

-- AlterEnum
ALTER TYPE "llm_interaction_type" ADD VALUE 'memory_extraction';

-- CreateTable
CREATE TABLE "investigation_memories" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "category" "memory_category" NOT NULL,
    "valence" "memory_valence" NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL DEFAULT 0.7,
    "seen_count" INTEGER NOT NULL DEFAULT 1,
    "deprecated" BOOLEAN NOT NULL DEFAULT false,
    "source_session_id" UUID,
    "alert_type" TEXT,
    "chain_id" TEXT,
    "embedding" DOUBLE PRECISION[],
    "embedding_model" TEXT,
    "last_seen_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "investigation_memories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session_injected_memories" (
    "session_id" UUID NOT NULL,
    "memory_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_injected_memories_pkey" PRIMARY KEY ("session_id","memory_id")
);

-- CreateIndex
CREATE INDEX "investigation_memories_project_deprecated_idx" ON "investigation_memories"("project", "deprecated");

-- CreateIndex
CREATE INDEX "investigation_memories_source_session_id_idx" ON "investigation_memories"("source_session_id");

-- CreateIndex
CREATE INDEX "session_injected_memories_memory_id_idx" ON "session_injected_memories"("memory_id");

-- AddForeignKey
ALTER TABLE "investigation_memories" ADD CONSTRAINT "investigation_memories_source_session_id_fkey" FOREIGN KEY ("source_session_id") REFERENCES "alert_sessions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "session_injected_memories" ADD CONSTRAINT "session_injected_memories_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "session_injected_memories" ADD CONSTRAINT "session_injected_memories_memory_id_fkey" FOREIGN KEY ("memory_id") REFERENCES "investigation_memories"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- tarsy:custom
-- Full-text search by expression indexes (Prisma cannot declare them): memories by their
-- content, sessions by their alert data (search_past_sessions).
CREATE INDEX "investigation_memories_content_fts_idx" ON "investigation_memories" USING GIN (to_tsvector('simple', "content"));
CREATE INDEX "alert_sessions_alert_data_fts_idx" ON "alert_sessions" USING GIN (to_tsvector('simple', "alert_data"));
