import { type SessionStatus, SYSTEM_CANCEL_ACTOR } from "@tarsy/contracts";
import type { AlertSession } from "@tarsy/db";

/** Who asked for a stop and why (ADR-0032); absent: TARSy stopped the session itself. */
export interface CancelBy {
  actor: string;
  /** Trimmed; null without one. */
  reason: string | null;
}

/** A session's cancel attribution, as its row and its `session.status` event carry it. */
export interface StopAttribution {
  cancelledBy: string | null;
  cancelReason: string | null;
}

/**
 * Who stopped a session that ends `status` now: the one recorded when it was cancelled (never
 * rewritten), else `system` with `detail` (its time limit, or why its agents were cancelled)
 * for a session TARSy stopped itself. Nobody for a session that failed or completed.
 */
export function stopAttribution(
  session: Pick<AlertSession, "cancelledBy" | "cancelReason">,
  status: SessionStatus,
  detail: string,
): StopAttribution {
  if (session.cancelledBy !== null) {
    return { cancelledBy: session.cancelledBy, cancelReason: session.cancelReason };
  }
  if (status === "cancelled" || status === "timed_out") {
    return { cancelledBy: SYSTEM_CANCEL_ACTOR, cancelReason: detail };
  }
  return { cancelledBy: null, cancelReason: null };
}
