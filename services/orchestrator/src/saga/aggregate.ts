import type { ExecutionStatus, SuccessPolicy } from "@tarsy/contracts";

export interface ExecutionOutcome {
  agentName: string;
  status: ExecutionStatus;
  errorMessage: string | null;
}

export type TerminalStatus = "completed" | "failed" | "cancelled" | "timed_out";

/**
 * A stage's status from its executions: with `any` it completed if one execution did; with
 * `all` only if every one did. Otherwise cancelled or timed out when every unsuccessful
 * execution was, else failed.
 */
export function aggregateStatus(
  executions: readonly ExecutionOutcome[],
  policy: SuccessPolicy,
): TerminalStatus {
  const completed = executions.filter((e) => e.status === "completed").length;
  const ok = policy === "all" ? completed === executions.length : completed > 0;
  if (ok && executions.length > 0) return "completed";
  const unsuccessful = executions.filter((e) => e.status !== "completed");
  if (unsuccessful.length > 0 && unsuccessful.every((e) => e.status === "cancelled")) {
    return "cancelled";
  }
  if (unsuccessful.length > 0 && unsuccessful.every((e) => e.status === "timed_out")) {
    return "timed_out";
  }
  return "failed";
}

/** The error of a stage that did not complete: the agent's own, or one line per agent. */
export function aggregateError(
  executions: readonly ExecutionOutcome[],
  policy: SuccessPolicy,
): string | null {
  const unsuccessful = executions.filter((e) => e.status !== "completed");
  if (unsuccessful.length === 0) return null;
  if (executions.length === 1) {
    const only = unsuccessful[0] as ExecutionOutcome;
    return only.errorMessage ?? `agent ${only.agentName} ${only.status}`;
  }
  const lines = unsuccessful.map(
    (e) => `- ${e.agentName}: ${e.status}${e.errorMessage ? `: ${e.errorMessage}` : ""}`,
  );
  return `${unsuccessful.length} of ${executions.length} agents did not complete (policy ${policy}):\n${lines.join("\n")}`;
}
