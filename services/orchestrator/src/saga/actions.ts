import { decideAction, findOverdueActions, TIMEOUT_DECIDER } from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";

/**
 * Pending action requests nobody decided in time count as denied (`expired`, by `timeout`),
 * and those whose execution ended meanwhile are cancelled; each decision wakes its execution,
 * which tells its agent. Runs with every sweep.
 */
export async function decideOverdueActions(deps: SagaDeps): Promise<number> {
  const now = deps.now();
  const overdue = await findOverdueActions(deps.db, now, 100);
  let decided = 0;
  for (const { id, expired } of overdue) {
    const result = await decideAction(deps.db, id, {
      status: expired ? "expired" : "cancelled",
      actor: expired ? TIMEOUT_DECIDER : "system",
      comment: expired ? "nobody decided before the approval timed out" : null,
      at: now,
    });
    if (result.outcome === "decided" || result.outcome === "already_decided") {
      const { action } = result;
      // Decided by this sweep (not by a person a moment before): counted and timed.
      if (action.decidedAt?.getTime() === now.getTime()) {
        const decision = action.status === "expired" ? "expired" : "cancelled";
        deps.metrics.actionDecided(decision, action.requestedAt, now);
      }
      decided++;
      deps.logger.info(
        { action_id: id, session_id: result.action.sessionId, status: result.action.status },
        expired ? "action request expired: counted as denied" : "action request cancelled",
      );
    }
  }
  if (decided > 0) await deps.flushOutbox();
  return decided;
}
