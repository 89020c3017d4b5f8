-- AlterTable
ALTER TABLE "alert_sessions" ADD COLUMN     "project" TEXT NOT NULL DEFAULT 'default',
ADD COLUMN     "user_token" TEXT,
ADD COLUMN     "user_token_expires_at" TIMESTAMPTZ(6);

-- AlterTable
ALTER TABLE "chat_user_messages" ADD COLUMN     "user_token" TEXT,
ADD COLUMN     "user_token_expires_at" TIMESTAMPTZ(6);

-- CreateTable
CREATE TABLE "api_tokens" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "name" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "project" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6),
    "revoked_at" TIMESTAMPTZ(6),
    "revoked_by" TEXT,
    "last_used_at" TIMESTAMPTZ(6),

    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "identity_source" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "session_id" UUID,
    "project" TEXT,
    "remote_addr" TEXT,
    "reason" TEXT,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "api_tokens_project_created_at_idx" ON "api_tokens"("project", "created_at");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

-- CreateIndex
CREATE INDEX "audit_log_actor_at_idx" ON "audit_log"("actor", "at");

-- CreateIndex
CREATE INDEX "audit_log_session_id_idx" ON "audit_log"("session_id");

-- CreateIndex
CREATE INDEX "alert_sessions_project_created_at_idx" ON "alert_sessions"("project", "created_at");

-- CreateIndex
CREATE INDEX "alert_sessions_user_token_expires_at_idx" ON "alert_sessions"("user_token_expires_at");

-- CreateIndex
CREATE INDEX "chat_user_messages_user_token_expires_at_idx" ON "chat_user_messages"("user_token_expires_at");


-- tarsy:custom
-- The audit log is append-only: rows can be added, never changed or removed one by one.
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();
