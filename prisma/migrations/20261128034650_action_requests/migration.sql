-- CreateEnum
CREATE TYPE "ActionStatus" AS ENUM ('pending', 'approved', 'denied', 'expired', 'cancelled');

-- CreateEnum
CREATE TYPE "ActionCallStatus" AS ENUM ('not_started', 'started', 'succeeded', 'failed', 'unknown');

-- CreateTable
CREATE TABLE "action_requests" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "session_id" UUID NOT NULL,
    "stage_id" UUID,
    "execution_id" UUID NOT NULL,
    "agent_name" TEXT NOT NULL,
    "tool_call_id" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "server" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "raw_arguments" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "approval_mode" TEXT NOT NULL,
    "status" "ActionStatus" NOT NULL DEFAULT 'pending',
    "requested_by" TEXT,
    "requested_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6),
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(6),
    "comment" TEXT,
    "call_status" "ActionCallStatus" NOT NULL DEFAULT 'not_started',
    "call_started_at" TIMESTAMPTZ(6),
    "call_ended_at" TIMESTAMPTZ(6),
    "result" TEXT,
    "called_by" TEXT,

    CONSTRAINT "action_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "action_audit" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "execution_id" UUID NOT NULL,
    "agent_name" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "detail" JSONB,

    CONSTRAINT "action_audit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "action_requests_status_expires_at_idx" ON "action_requests"("status", "expires_at");

-- CreateIndex
CREATE INDEX "action_requests_session_id_requested_at_idx" ON "action_requests"("session_id", "requested_at");

-- CreateIndex
CREATE UNIQUE INDEX "action_requests_execution_id_tool_call_id_key" ON "action_requests"("execution_id", "tool_call_id");

-- CreateIndex
CREATE INDEX "action_audit_action_id_id_idx" ON "action_audit"("action_id", "id");

-- CreateIndex
CREATE INDEX "action_audit_session_id_at_idx" ON "action_audit"("session_id", "at");

-- AddForeignKey
ALTER TABLE "action_requests" ADD CONSTRAINT "action_requests_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "alert_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- tarsy:custom
-- The actions' audit record is append-only: rows are added, never changed or removed.
CREATE FUNCTION "action_audit_append_only"() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'action_audit is append-only';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER "action_audit_append_only" BEFORE UPDATE OR DELETE ON "action_audit"
  FOR EACH ROW EXECUTE FUNCTION "action_audit_append_only"();
CREATE TRIGGER "action_audit_no_truncate" BEFORE TRUNCATE ON "action_audit"
  FOR EACH STATEMENT EXECUTE FUNCTION "action_audit_append_only"();
