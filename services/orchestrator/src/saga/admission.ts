import { admitPendingSessions, enqueueOutbox, setSessionDeadline } from "@tarsy/db";
import { stepChain } from "./chain.ts";
import type { SagaDeps } from "./deps.ts";
import { queueSessionStatus } from "./events.ts";
import { withSession } from "./session-lock.ts";

/**
 * Admits pending sessions while fewer than `queue.max_concurrent_sessions` run across all
 * replicas (the admission transaction is serialized by an advisory lock), fairly across alert
 * types (oldest first within a type; see `admitPendingSessions`), then starts each one.
 */
export async function admitAndStart(deps: SagaDeps): Promise<number> {
  const admitted = await admitPendingSessions(deps.db, {
    podId: deps.podId,
    maxConcurrent: deps.config.queue.max_concurrent_sessions,
  });
  for (const session of admitted) await startSession(deps, session.id);
  return admitted.length;
}

/**
 * Starts an admitted session: sets its deadline (and schedules the timeout check), announces
 * it and runs the first chain step. Idempotent: a session that already has a deadline only
 * gets its chain stepped (which does nothing when the stage is already running).
 */
export async function startSession(deps: SagaDeps, sessionId: string): Promise<void> {
  await withSession(deps, sessionId, async (tx, session, locked) => {
    if (session.status !== "in_progress") return;
    if (session.deadlineAt === null) {
      const now = locked.now();
      const deadline = new Date(now.getTime() + locked.config.queue.session_timeout_ms);
      await setSessionDeadline(tx, session.id, deadline);
      session.deadlineAt = deadline;
      await queueSessionStatus(tx, session, "in_progress", now);
      await enqueueOutbox(tx, "deadline", {
        v: 1,
        session_id: session.id,
        scope: "session",
        deadline_at: deadline.toISOString(),
      });
      locked.logger.info({ session_id: session.id, deadline }, "session started");
    }
    await stepChain(locked, tx, session);
  });
  await deps.flushOutbox();
}
