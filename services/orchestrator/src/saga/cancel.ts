import type { CancelControl } from "@tarsy/contracts";
import { listSessionStages, transitionSessionStatus } from "@tarsy/db";
import { admitAndStart } from "./admission.ts";
import { type CancelBy, stopAttribution } from "./cancel-attribution.ts";
import { abortOpenWork, failSession } from "./chain.ts";
import type { SagaDeps } from "./deps.ts";
import { queueSessionStatus } from "./events.ts";
import { withSession } from "./session-lock.ts";

export type StopReason = "cancelled" | "timed_out";

/**
 * Stops a session: pending ones end at once; running ones go through `cancelling`, their open
 * executions and stages end, the session ends, and the runners are told to abort in-flight
 * LLM and MCP calls (their final writes still happen). A terminal session with a chat turn in
 * flight has that turn stopped instead.
 */
export async function stopSession(
  deps: SagaDeps,
  sessionId: string,
  reason: StopReason,
  detail: string,
  /** What may be stopped: the investigation, a chat turn (one stage, or any), or either. */
  scope: { session: boolean; chatStageId?: string | "any" } = { session: true, chatStageId: "any" },
  /** Who asked (a user's cancel): recorded on the session it stops. */
  by?: CancelBy,
): Promise<{ stopped: "session" | "chat" | null }> {
  const controls: CancelControl[] = [];
  const result = await withSession(deps, sessionId, async (tx, session, locked) => {
    const now = locked.now();
    if (session.status === "pending") {
      if (reason === "timed_out" || !scope.session) return { stopped: null };
      const attribution = by
        ? { cancelledBy: by.actor, cancelReason: by.reason }
        : stopAttribution(session, "cancelled", detail);
      await transitionSessionStatus(
        tx,
        session.id,
        ["pending"],
        "cancelled",
        { completedAt: now, errorMessage: detail, ...attribution },
        () =>
          queueSessionStatus(tx, session, "cancelled", now, {
            error: detail,
            ...attribution,
          }),
      );
      locked.metrics.sessionEnded(session, "cancelled", now);
      return { stopped: "session" as const };
    }
    if (session.status === "in_progress" || session.status === "cancelling") {
      if (!scope.session) return { stopped: null };
      if (session.status === "in_progress" && reason === "cancelled") {
        // The canceller is written with `cancelling`, once: a second cancel finds the
        // session `cancelling` and keeps the first one's name and reason.
        const attribution = by ? { cancelledBy: by.actor, cancelReason: by.reason } : {};
        await transitionSessionStatus(tx, session.id, ["in_progress"], "cancelling", attribution);
        await queueSessionStatus(tx, session, "cancelling", now);
        Object.assign(session, attribution);
      }
      await failSession(locked, tx, session, detail, reason);
      controls.push({
        v: 1,
        session_id: session.id,
        scope: "session",
        reason,
        timestamp: now.toISOString(),
      });
      return { stopped: "session" as const };
    }
    // Terminal: stop an active chat turn, if any.
    if (scope.chatStageId === undefined) return { stopped: null };
    const chatStages = (await listSessionStages(tx, session.id)).filter(
      (s) =>
        s.kind === "chat" &&
        (s.status === "pending" || s.status === "active") &&
        (scope.chatStageId === "any" || s.id === scope.chatStageId),
    );
    if (chatStages.length === 0) return { stopped: null };
    await abortOpenWork(locked, tx, chatStages, reason, detail);
    for (const stage of chatStages) {
      controls.push({
        v: 1,
        session_id: session.id,
        scope: "chat",
        stage_id: stage.id,
        reason,
        timestamp: now.toISOString(),
      });
    }
    return { stopped: "chat" as const };
  });
  await deps.flushOutbox();
  for (const control of controls) deps.bus.publishTransient("cancelControl", control);
  if (result.stopped === "session") await admitAndStart(deps);
  return result;
}
