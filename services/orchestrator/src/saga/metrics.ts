import type { SessionStatus, StageStatus } from "@tarsy/contracts";
import { recordActionDecision, type ServiceMetrics, secondsBetween } from "@tarsy/metrics";

/** A row with the times a duration is measured from. */
interface Timed {
  createdAt: Date;
  startedAt: Date | null;
}

/** What the saga records as sessions and stages reach a terminal status. */
export interface SagaMetrics {
  sessionEnded(session: Timed, status: SessionStatus, at: Date): void;
  stageEnded(stage: Timed, status: StageStatus, at: Date): void;
  /** A work message named something missing and was dropped. */
  workOrphaned(kind: string, missing: string): void;
  /** An action stage ended: whether its agents acted, or that it did not complete. */
  actionStageEnded(outcome: ActionStageOutcome): void;
  /** The sweep decided a pending action request: it timed out, or its execution ended. */
  actionDecided(decision: "expired" | "cancelled", requestedAt: Date, at: Date): void;
}

export type ActionStageOutcome = "acted" | "no_action" | "unknown" | "failed";

/** The outcome of an action stage that ended with `status` and `actionsExecuted`. */
export function actionStageOutcome(
  status: StageStatus,
  actionsExecuted: boolean | null,
): ActionStageOutcome {
  if (status !== "completed") return "failed";
  if (actionsExecuted === null) return "unknown";
  return actionsExecuted ? "acted" : "no_action";
}

export type SagaMetricSet = Pick<
  ServiceMetrics<"orchestrator">,
  | "sessions"
  | "sessionDuration"
  | "stageDuration"
  | "workOrphaned"
  | "actionStageOutcomes"
  | "actionRequests"
  | "actionDecisionDuration"
>;

/** Durations run from the start (admission, stage start), or creation for what never started. */
export function sagaMetrics(metrics: SagaMetricSet): SagaMetrics {
  return {
    sessionEnded(session, status, at) {
      metrics.sessions.inc({ status });
      metrics.sessionDuration.observe(
        { status },
        secondsBetween(session.startedAt ?? session.createdAt, at),
      );
    },
    stageEnded(stage, status, at) {
      metrics.stageDuration.observe(
        { status },
        secondsBetween(stage.startedAt ?? stage.createdAt, at),
      );
    },
    workOrphaned(kind, missing) {
      metrics.workOrphaned.inc({ kind, missing });
    },
    actionStageEnded(outcome) {
      metrics.actionStageOutcomes.inc({ outcome });
    },
    actionDecided(decision, requestedAt, at) {
      recordActionDecision(metrics, decision, requestedAt, at);
    },
  };
}

/**
 * Metrics whose recording waits in `pending` until the caller applies it: a step inside a
 * transaction records only once the transaction committed, so a step that rolls back and is
 * redelivered is not counted twice.
 */
export function deferredMetrics(target: SagaMetrics, pending: (() => void)[]): SagaMetrics {
  return {
    sessionEnded: (...args) => void pending.push(() => target.sessionEnded(...args)),
    stageEnded: (...args) => void pending.push(() => target.stageEnded(...args)),
    actionStageEnded: (...args) => void pending.push(() => target.actionStageEnded(...args)),
    // Recorded when a message is dropped, outside any transaction.
    workOrphaned: (...args) => target.workOrphaned(...args),
    // Recorded by the sweep after its decision committed.
    actionDecided: (...args) => target.actionDecided(...args),
  };
}
