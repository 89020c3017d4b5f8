/**
 * The compose stage (ADR-0025): after each successful action stage (and its synthesis, when
 * parallel action agents ran) the orchestrator adds "{action stage} - Amended Report", one
 * tool-less call that copy-edits the upstream report with the action memo folded in. Its
 * output becomes the session's final analysis. Fail-open: when the call fails, the stage is
 * `failed`, its analysis is the two documents concatenated, a warning goes on the timeline,
 * and the chain goes on.
 */
import { type ChainConfig, resolveComposeConfig } from "@tarsy/config";
import {
  type AgentExecution,
  type AlertSession,
  createTimelineEvent,
  enqueueOutbox,
  ensureStage,
  type Stage,
  type Tx,
  transitionExecutionStatus,
} from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";

export const COMPOSE_SUFFIX = " - Amended Report";

type StageRow = Stage & { executions: AgentExecution[] };

/** Where a stage result comes from: what the compose stage may take as its upstream report. */
export type ResultSource = "investigation" | "action" | "compose";

export interface SourcedResult {
  stageName: string;
  finalAnalysis: string;
  source: ResultSource;
  /** Why the stage's agent was made to conclude (null: it concluded by itself). */
  forcedConclusion: string | null;
}

/** The stage's own executions (sub-agents count only through their parent). */
function own(stage: StageRow): AgentExecution[] {
  return stage.executions.filter((e) => e.parentExecutionId === null);
}

function answerOf(stage: StageRow): { finalAnalysis: string; forcedConclusion: string | null } {
  const answer = own(stage).find((e) => e.status === "completed" && e.finalAnalysis);
  return {
    finalAnalysis: answer?.finalAnalysis ?? "",
    forcedConclusion: answer?.forcedConclusion ?? null,
  };
}

function analysisOf(stage: StageRow): string {
  return answerOf(stage).finalAnalysis;
}

/**
 * The chain's results in order: each investigation or action stage's analysis, replaced by
 * its synthesis when one ran, and an action's (or its synthesis's) replaced by the compose
 * stage after it, completed or failed (then it holds the concatenation). A compose stage
 * without an analysis (stopped by a cancel or a timeout) replaces nothing.
 */
export function sourcedResults(stages: readonly StageRow[]): SourcedResult[] {
  const results: SourcedResult[] = [];
  for (const stage of stages) {
    if (stage.kind === "compose") {
      const text = own(stage).find((e) => e.finalAnalysis)?.finalAnalysis ?? "";
      if (!text) continue;
      results.pop();
      results.push({
        stageName: stage.stageName,
        finalAnalysis: text,
        source: "compose",
        forcedConclusion: null,
      });
      continue;
    }
    if (stage.status !== "completed") continue;
    if (stage.kind === "synthesis") {
      const replaced = results.pop();
      results.push({
        stageName: stage.stageName,
        ...answerOf(stage),
        source: replaced?.source ?? "investigation",
      });
    } else if (stage.kind === "investigation" || stage.kind === "action") {
      results.push({ stageName: stage.stageName, ...answerOf(stage), source: stage.kind });
    }
  }
  return results;
}

/** What a compose stage merges: the report before the action stage, and the action's memo. */
export interface ComposeInputs {
  action: StageRow;
  upstream: string;
  memo: string;
}

/**
 * The compose stage the chain owes now, if any: when the last stage is a completed action
 * stage with one agent, or the completed synthesis of a parallel action stage, and there is
 * an upstream report (the last investigation, synthesis or earlier compose analysis before
 * the action stage). An action-only chain has none: no compose stage, the memo stays the
 * session's analysis. Whether the agents acted does not matter ("no action" is an amendment too).
 */
export function composeDue(stages: readonly StageRow[]): ComposeInputs | null {
  const last = stages.at(-1);
  if (last?.status !== "completed") return null;
  let actionAt = -1;
  if (last.kind === "action" && own(last).length === 1) actionAt = stages.length - 1;
  else if (last.kind === "synthesis" && stages.at(-2)?.kind === "action") {
    actionAt = stages.length - 2;
  }
  const action = stages[actionAt];
  if (!action) return null;
  const upstream =
    sourcedResults(stages.slice(0, actionAt))
      .filter((r) => r.source !== "action" && r.finalAnalysis.trim())
      .at(-1)?.finalAnalysis ?? "";
  if (!upstream.trim()) return null;
  return { action, upstream, memo: analysisOf(last) };
}

/** The compose call's input: the two documents, each in its fence. */
export function formatComposeInput(upstream: string, memo: string): string {
  return `=== UPSTREAM REPORT ===
${upstream.trim()}
=== END UPSTREAM REPORT ===

=== ACTION MEMO ===
${memo.trim()}
=== END ACTION MEMO ===`;
}

/** The fail-open report: the upstream report, then the memo under a generic heading. */
export function concatenatedReport(upstream: string, memo: string): string {
  return `${upstream.trim()}\n\n## Action result\n\n${memo.trim()}`;
}

/** Creates the compose stage and its execution (idempotent); returns it when newly created. */
export async function createComposeStage(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
  after: Stage,
  inputs: ComposeInputs,
): Promise<{ stage: Stage; executions: AgentExecution[]; context: string } | null> {
  const resolved = resolveComposeConfig(deps.config, chain);
  const { stage, executions, created } = await ensureStage(
    tx,
    {
      sessionId: session.id,
      stageName: `${inputs.action.stageName}${COMPOSE_SUFFIX}`,
      stageIndex: after.stageIndex + 1,
      kind: "compose",
      expectedAgentCount: 1,
      successPolicy: "all",
    },
    [
      {
        agentName: resolved.agent_name,
        agentIndex: 1,
        kind: "compose",
        backend: resolved.llm_backend,
        llmProvider: resolved.llm_provider_name,
      },
    ],
  );
  if (!created) return null;
  return { stage, executions, context: formatComposeInput(inputs.upstream, inputs.memo) };
}

/**
 * A compose stage that just failed: its execution's analysis becomes the concatenation of the
 * two documents it was given, and a warning on the timeline says so. Called once, when the
 * stage turns `failed` (inside the session lock).
 */
export async function applyComposeFallback(
  deps: SagaDeps,
  tx: Tx,
  stages: readonly StageRow[],
  compose: StageRow,
): Promise<void> {
  const execution = own(compose)[0];
  const inputs = composeDue(stages.slice(0, stages.indexOf(compose)));
  if (!execution || !inputs) return;
  const report = concatenatedReport(inputs.upstream, inputs.memo);
  await transitionExecutionStatus(tx, execution.id, ["failed"], "failed", {
    finalAnalysis: report,
  });
  execution.finalAnalysis = report;
  const reason = execution.errorMessage ?? compose.errorMessage ?? "the compose call failed";
  const event = await createTimelineEvent(tx, {
    sessionId: compose.sessionId,
    stageId: compose.id,
    executionId: null,
    eventType: "error",
    status: "completed",
    content: `The amended report could not be composed (${reason}); the final analysis is the upstream report followed by the action result, unedited.`,
    metadata: { kind: "compose_fallback", severity: "warning" },
  });
  await enqueueOutbox(tx, "timelineEventCreated", {
    v: 1,
    type: "timeline_event.created",
    session_id: event.sessionId,
    stage_id: event.stageId,
    execution_id: null,
    event_id: event.id,
    sequence_number: event.sequenceNumber,
    event_type: event.eventType,
    status: event.status,
    content: event.content,
    metadata: { kind: "compose_fallback", severity: "warning" },
    timestamp: event.createdAt.toISOString(),
  });
  deps.logger.warn(
    { session_id: compose.sessionId, stage: compose.stageName, reason },
    "compose failed: the final analysis is the upstream report and the action memo concatenated",
  );
}
