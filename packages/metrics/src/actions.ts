import type { MetricOf } from "./registry.ts";
import { secondsBetween } from "./timing.ts";

/** What records an action request's decision (ingest-api: people; orchestrator: timeouts). */
export interface ActionDecisionMetrics {
  actionRequests: MetricOf<"actionRequests">;
  actionDecisionDuration: MetricOf<"actionDecisionDuration">;
}

/** Counts a decision of a request whose agent needs approval, and times it from the request. */
export function recordActionDecision(
  metrics: ActionDecisionMetrics,
  decision: "approved" | "denied" | "expired" | "cancelled",
  requestedAt: Date,
  decidedAt: Date,
): void {
  metrics.actionRequests.inc({ event: decision, mode: "required" });
  metrics.actionDecisionDuration.observe({ decision }, secondsBetween(requestedAt, decidedAt));
}
