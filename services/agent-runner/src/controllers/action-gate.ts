import type { ToolCall } from "@tarsy/llm-client";
import type { Conversation } from "../conversation.ts";
import { ExecutionSuspendedError } from "../errors.ts";
import type { ActionRecord, ToolScope } from "../ports.ts";
import type { RunContext } from "../run-context.ts";
import { truncateForStorage } from "../truncation.ts";

/**
 * Action agents' mutating calls (issue #30). Each becomes an action request before it is
 * made: `approval: auto` approves it at once; `required` parks the execution (no runner slot
 * held) until a person decides or the request times out, and the decision resumes it here.
 * Only an approved request's id lets mcp-gateway run the call, once.
 */

/** Whether the call goes to a tool the gateway classes as mutating (listed to this agent). */
export function isMutatingCall(scope: ToolScope, name: string): boolean {
  if (!scope.allowMutating || !scope.mutatingTools) return false;
  return scope.mutatingTools.has(canonicalName(name));
}

function canonicalName(name: string): string {
  if (name.includes(".")) return name;
  const sep = name.indexOf("__");
  return sep > 0 ? `${name.slice(0, sep)}.${name.slice(sep + 2)}` : name;
}

/** The call's arguments masked for people (as text when masking leaves no JSON behind). */
function maskedArguments(run: RunContext, args: Record<string, unknown>): Record<string, unknown> {
  const masked = run.maskForDisplay(JSON.stringify(args));
  try {
    const parsed: unknown = JSON.parse(masked);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // falls through
  }
  return { masked };
}

export type GateOutcome =
  /** Approved and never started: make the call with this idempotency key. */
  | { kind: "call"; actionId: string }
  /** Not to be made (denied, expired, cancelled, already made or outcome unknown). */
  | { kind: "answer"; actionId: string; content: string; isError: boolean; state: string };

const UNKNOWN_OUTCOME =
  "The outcome of this call is unknown: it was sent, and the process making it stopped before its result was recorded. It was NOT repeated. Check the system's state yourself before deciding anything that depends on it; a person has been told.";

function decided(action: ActionRecord, tool: string): GateOutcome {
  const who = action.decidedBy ?? "unknown";
  const why = action.comment ? ` Comment: ${action.comment}` : "";
  const answer = (content: string, isError: boolean, state: string): GateOutcome => ({
    kind: "answer",
    actionId: action.id,
    content,
    isError,
    state,
  });
  switch (action.status) {
    case "denied":
      return answer(
        `The call to ${tool} was NOT made: a person (${who}) denied it.${why} Do not try to make this change another way; report what you would have done and why.`,
        true,
        "denied",
      );
    case "expired":
      return answer(
        `The call to ${tool} was NOT made: nobody approved it before its approval timed out (a timeout counts as a denial). Report what you would have done and why.`,
        true,
        "expired",
      );
    case "cancelled":
      return answer(
        `The call to ${tool} was NOT made: its request was cancelled.${why}`,
        true,
        "cancelled",
      );
    default:
      break;
  }
  switch (action.callStatus) {
    case "succeeded":
    case "failed":
      // Made by an earlier attempt (its result was recorded): not made again.
      return answer(action.result ?? "", action.callStatus === "failed", action.callStatus);
    default:
      return answer(UNKNOWN_OUTCOME, true, "unknown");
  }
}

/**
 * The request of a mutating call, and what to do with it: make it, answer without making it,
 * or (a pending request) park the execution, which throws ExecutionSuspendedError.
 */
export async function gateMutatingCall(
  run: RunContext,
  scope: ToolScope,
  conversation: Conversation,
  call: ToolCall,
  server: string,
  tool: string,
  args: unknown,
): Promise<GateOutcome> {
  const { exec } = run;
  const approval = exec.config.approval ?? { mode: "required", timeoutMs: 30 * 60_000 };
  const wrapUpAt = run.budget.wrapUpAt();
  const timeoutAt = Date.now() + approval.timeoutMs;
  const expiresAt = new Date(wrapUpAt === null ? timeoutAt : Math.min(timeoutAt, wrapUpAt));
  // The agent's stated reason and evidence: its text of the turn that made the call.
  const turn = [...conversation.messages].reverse().find((m) => m.role === "assistant");
  const shown =
    typeof args === "object" && args !== null && !Array.isArray(args)
      ? (args as Record<string, unknown>)
      : { input: args };
  // A call a person must approve, whose tool has a dry-run form: that form runs first (once,
  // for a new request), and its result is shown on the request.
  const dryRun =
    approval.mode === "required" &&
    scope.dryRunTools?.has(canonicalName(call.name)) &&
    !(await run.store.actions.find(exec.executionId, call.id))
      ? await dryRunOf(run, scope, call)
      : null;
  const requested = await run.store.actions.request({
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
    agentName: exec.config.agentName,
    toolCallId: call.id,
    server,
    tool,
    rawArguments: call.arguments,
    arguments: maskedArguments(run, shown),
    reason: run.maskForDisplay(turn?.content ?? ""),
    approvalMode: approval.mode,
    expiresAt,
    dryRun,
  });
  let { action } = requested;
  if (requested.created) {
    run.metrics.actionRequests.inc({ event: "requested", mode: approval.mode });
    if (approval.mode === "auto")
      run.metrics.actionRequests.inc({ event: "approved", mode: "auto" });
  }
  for (;;) {
    if (action.status === "approved" && action.callStatus === "not_started") {
      return { kind: "call", actionId: action.id };
    }
    if (action.status === "approved" && action.callStatus === "started") {
      // An earlier attempt sent it and died before its end was recorded: never again.
      action =
        (await run.store.actions.markOutcomeUnknown(
          action.id,
          `agent-runner:${run.runnerId}`,
          "the attempt making the call stopped before its result was recorded",
        )) ?? action;
      if (action.callStatus === "started")
        return decided({ ...action, callStatus: "unknown" }, tool);
    }
    if (action.status !== "pending") return decided(action, tool);
    const parked = await run.parkForAction(action.id);
    if (parked === "suspended") {
      run.logger.info(
        { action_id: action.id, tool: `${server}.${tool}` },
        "mutating call waits for approval: execution suspended, runner slot freed",
      );
      throw new ExecutionSuspendedError(exec.executionId, "approval");
    }
    // Decided meanwhile: read it again.
    action = (await run.store.actions.find(exec.executionId, call.id)) ?? action;
  }
}

/**
 * The answer when an approved call brought no reply (the gateway was lost, the reply timed
 * out): unknown when the gateway had started it, else it was not made.
 */
export async function answerAfterFailure(
  run: RunContext,
  actionId: string,
  why: string,
): Promise<string> {
  const marked = await run.store.actions.markOutcomeUnknown(
    actionId,
    `agent-runner:${run.runnerId}`,
    why,
  );
  if (marked) return `${UNKNOWN_OUTCOME} (${why})`;
  const action = await run.store.actions.find(run.exec.executionId, "", actionId);
  if (action && (action.callStatus === "succeeded" || action.callStatus === "failed")) {
    // The gateway recorded its end after all.
    return action.result ?? "";
  }
  if (action?.callStatus === "unknown") return `${UNKNOWN_OUTCOME} (${why})`;
  return `Tool call failed before it was made: ${why}`;
}

/**
 * Runs the call's dry-run form through the gateway (in the trace as an MCP interaction of its
 * own); a failure to run it is its result.
 */
async function dryRunOf(
  run: RunContext,
  scope: ToolScope,
  call: ToolCall,
): Promise<{ status: "succeeded" | "failed"; result: string }> {
  try {
    const result = await run.tools.callTool(
      scope,
      { callId: `${call.id}:dry-run`, name: call.name, arguments: call.arguments, dryRun: true },
      run.signal,
    );
    const stored = truncateForStorage(result.content);
    const { exec } = run;
    run.writes.enqueue(() =>
      run.store.recordMcpInteraction({
        sessionId: exec.sessionId,
        stageId: exec.stageId,
        executionId: exec.executionId,
        interactionType: "tool_call",
        serverName: result.server ?? "",
        toolName: result.tool ?? call.name,
        toolArguments: result.arguments ?? {},
        // What it was the dry run of: the trace tells it from a call that was made.
        toolResult: {
          content: stored,
          is_error: result.isError,
          dry_run_of: canonicalName(call.name),
        },
        availableTools: null,
        durationMs: result.durationMs,
        errorMessage: result.isError ? stored : null,
      }),
    );
    return { status: result.isError ? "failed" : "succeeded", result: stored };
  } catch (err) {
    if (run.signal.aborted) throw err;
    return {
      status: "failed",
      result: `the dry run could not be made: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
