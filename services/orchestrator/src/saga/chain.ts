/**
 * The chain loop as one idempotent step over the state in Postgres: whatever handler woke it
 * (submission, an execution finishing, recovery), `stepChain` looks at the session's stages
 * and does what comes next. Run inside the session lock; everything it publishes goes through
 * the outbox of the same transaction.
 */
import {
  type ChainConfig,
  planStage,
  resolveExecutiveSummaryConfig,
  resolveSynthesisConfig,
  TarsyConfigError,
} from "@tarsy/config";
import {
  ACTIVE_EXECUTION_STATUSES,
  type ExecutionStatus,
  RUNNING_SESSION_STATUSES,
  TERMINAL_EXECUTION_STATUSES,
} from "@tarsy/contracts";
import {
  type AgentExecution,
  type AlertSession,
  endStreamingEvents,
  enqueueOutbox,
  ensureExecutiveSummaryExecution,
  ensureStage,
  getExecutiveSummaryExecution,
  labelsColumn,
  listExecutionTimeline,
  listSessionStages,
  type Stage,
  storedLabels,
  type Tx,
  transitionExecutionStatus,
  transitionSessionStatus,
  transitionStageStatus,
  updateSessionProgress,
} from "@tarsy/db";
import { formatInvestigationForSynthesis } from "../context/investigation.ts";
import { buildStageContext, type StageResult } from "../context/stage-context.ts";
import { aggregateError, aggregateStatus } from "./aggregate.ts";
import { stopAttribution } from "./cancel-attribution.ts";
import { applyComposeFallback, composeDue, createComposeStage, sourcedResults } from "./compose.ts";
import type { SagaDeps } from "./deps.ts";
import { queueSessionStatus, queueStageStatus, queueTimelineEventCompleted } from "./events.ts";
import { actionStageOutcome } from "./metrics.ts";
import { startAutoScore } from "./scoring.ts";
import { sessionTimeoutReason } from "./timeouts.ts";

export const SYNTHESIS_SUFFIX = " - Synthesis";
type StageRow = Stage & { executions: AgentExecution[] };
const isTerminal = (status: ExecutionStatus) => TERMINAL_EXECUTION_STATUSES.includes(status);

/**
 * The stage's own agents: sub-agents share their parent's stage but count only through their
 * parent's answer (a failed sub-agent never fails the stage).
 */
export function ownExecutions<E extends Pick<AgentExecution, "parentExecutionId">>(
  executions: readonly E[],
): E[] {
  return executions.filter((e) => e.parentExecutionId === null);
}

/** What the step did, for the caller (e.g. to run admission when a slot freed). */
export interface StepOutcome {
  sessionTerminal: boolean;
}

export async function stepChain(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
): Promise<StepOutcome> {
  if (session.status !== "in_progress") return { sessionTerminal: false };
  const chain = deps.config.chains.get(session.chainId);
  if (!chain) {
    await failSession(deps, tx, session, `chain "${session.chainId}" is no longer configured`);
    return { sessionTerminal: true };
  }
  try {
    return await advance(deps, tx, session, chain);
  } catch (err) {
    // A configuration problem (unknown agent, provider…) fails the session with its reason
    // instead of redelivering forever.
    if (err instanceof TarsyConfigError) {
      await failSession(deps, tx, session, err.message);
      return { sessionTerminal: true };
    }
    throw err;
  }
}

async function advance(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
): Promise<StepOutcome> {
  const stages = (await listSessionStages(tx, session.id)).filter((s) => s.kind !== "chat");
  const last = stages.at(-1);
  if (!last) {
    await startInvestigationStage(deps, tx, session, chain, 0, stages);
    return { sessionTerminal: false };
  }
  if (!isTerminal(last.status)) {
    if (!ownExecutions(last.executions).every((e) => isTerminal(e.status))) {
      return { sessionTerminal: false };
    }
    const finished = await finishStage(deps, tx, last);
    if (finished === "failed" && last.kind === "compose") {
      // Fail-open: the concatenated report stands in and the chain goes on.
      last.status = "failed";
      await applyComposeFallback(deps, tx, stages, last);
    } else if (finished !== "completed") {
      await failSession(deps, tx, session, stageFailure(last, finished), finished);
      return { sessionTerminal: true };
    } else {
      last.status = "completed";
    }
  }
  const failedCompose = last.kind === "compose" && last.status === "failed";
  if (last.status !== "completed" && !failedCompose) {
    await failSession(deps, tx, session, stageFailure(last, last.status));
    return { sessionTerminal: true };
  }
  // Chain stages are investigation or action stages; synthesis and chat stages come between.
  const configIndex = stages.filter(isChainStage).length - 1;
  if (isChainStage(last) && ownExecutions(last.executions).length > 1) {
    await startSynthesisStage(deps, tx, session, chain, configIndex, last);
    return { sessionTerminal: false };
  }
  const compose = composeDue(stages);
  if (compose) {
    const opened = await createComposeStage(deps, tx, session, chain, last, compose);
    if (opened) {
      await openStage(deps, tx, session, opened.stage, opened.executions, opened.context);
    }
    return { sessionTerminal: false };
  }
  if (configIndex + 1 < chain.stages.length) {
    await startInvestigationStage(deps, tx, session, chain, configIndex + 1, stages);
    return { sessionTerminal: false };
  }
  return summarizeOrComplete(deps, tx, session, chain, stages);
}

function stageFailure(stage: Stage, status: string): string {
  return stage.errorMessage
    ? `stage "${stage.stageName}" ${status}: ${stage.errorMessage}`
    : `stage "${stage.stageName}" ${status}`;
}

/** A stage the chain's configuration lists (an investigation or an action stage; not compose). */
function isChainStage(stage: Stage): boolean {
  return stage.kind === "investigation" || stage.kind === "action";
}

/**
 * Final analyses of the completed stages; a synthesis replaces its stage's result, and a
 * compose stage (its amended report, or the concatenation when it failed) replaces the action
 * memo before it. The last one is the session's final analysis.
 */
export function completedResults(stages: readonly StageRow[]): StageResult[] {
  return sourcedResults(stages).map(({ stageName, finalAnalysis, forcedConclusion }) => ({
    stageName,
    finalAnalysis,
    forcedConclusion,
  }));
}

async function finishStage(deps: SagaDeps, tx: Tx, stage: StageRow) {
  const policy = stage.successPolicy ?? "any";
  const outcomes = ownExecutions(stage.executions).map((e) => ({
    agentName: e.agentName,
    status: e.status,
    errorMessage: e.errorMessage,
  }));
  const status = aggregateStatus(outcomes, policy);
  const error = status === "completed" ? null : aggregateError(outcomes, policy);
  const actionsExecuted =
    stage.kind === "action" ? stageActionsExecuted(ownExecutions(stage.executions)) : null;
  const now = deps.now();
  if (
    await transitionStageStatus(tx, stage.id, ACTIVE_EXECUTION_STATUSES, status, {
      completedAt: now,
      errorMessage: error,
      actionsExecuted,
    })
  ) {
    stage.errorMessage = error;
    stage.actionsExecuted = actionsExecuted;
    await queueStageStatus(tx, stage, status, now, error);
    deps.metrics.stageEnded(stage, status, now);
    if (stage.kind === "action") {
      deps.metrics.actionStageEnded(actionStageOutcome(status, actionsExecuted));
      if (status === "completed" && actionsExecuted === null) {
        deps.logger.warn(
          { session_id: stage.sessionId, stage: stage.stageName },
          "action stage ended without a YES/NO answer from its agents: whether they acted is unknown",
        );
      }
    }
  }
  return status;
}

/**
 * Whether an action stage's agents acted, from their YES/NO lines: true if any completed agent
 * said YES; false only when every completed agent said NO; null (unknown) otherwise. Never
 * claims an action when it is not known.
 */
export function stageActionsExecuted(executions: readonly AgentExecution[]): boolean | null {
  const answers = executions.filter((e) => e.status === "completed").map((e) => e.actionsExecuted);
  if (answers.includes(true)) return true;
  if (answers.length > 0 && answers.every((a) => a === false)) return false;
  return null;
}

async function requestExecutions(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  stageId: string | null,
  executions: readonly AgentExecution[],
  context: string | undefined,
): Promise<void> {
  const now = deps.now().toISOString();
  for (const execution of executions) {
    await enqueueOutbox(tx, "executionRequested", {
      v: 1,
      session_id: session.id,
      stage_id: stageId,
      execution_id: execution.id,
      kind: execution.kind,
      agent_name: execution.agentName,
      agent_index: execution.agentIndex,
      ...(context ? { context } : {}),
      ...(session.deadlineAt
        ? {
            deadline_at: session.deadlineAt.toISOString(),
            deadline_reason: sessionTimeoutReason(deps.config),
          }
        : {}),
      requested_at: now,
    });
  }
}

async function openStage(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  stage: Stage,
  executions: readonly AgentExecution[],
  context: string | undefined,
): Promise<void> {
  const now = deps.now();
  await transitionStageStatus(tx, stage.id, ["pending"], "active", { startedAt: now });
  await updateSessionProgress(tx, session.id, stage.stageIndex, stage.stageName);
  await queueStageStatus(tx, stage, "started", now);
  await queueSessionStatus(tx, session, "in_progress", now, { currentStage: stage.stageName });
  await requestExecutions(deps, tx, session, stage.id, executions, context);
  deps.logger.info(
    { session_id: session.id, stage: stage.stageName, executions: executions.length },
    "stage started",
  );
}

async function startInvestigationStage(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
  configIndex: number,
  previous: readonly StageRow[],
): Promise<void> {
  const plan = planStage(deps.config, chain, configIndex);
  const { stage, executions, created } = await ensureStage(
    tx,
    {
      sessionId: session.id,
      stageName: plan.stage_name,
      stageIndex: previous.length + 1,
      kind: plan.kind,
      expectedAgentCount: plan.executions.length,
      parallelType: plan.parallel_type,
      successPolicy: plan.success_policy,
    },
    plan.executions.map((e) => ({
      agentName: e.display_name,
      agentIndex: e.index + 1,
      // An action agent gets the safety guidelines wherever it runs, even in a mixed stage.
      kind: e.agent_type === "action" ? ("action" as const) : ("investigation" as const),
      backend: e.config.llm_backend,
      llmProvider: e.config.llm_provider_name,
    })),
  );
  if (!created) return;
  const context = buildStageContext(completedResults(previous)) || undefined;
  await openStage(deps, tx, session, stage, executions, context);
}

async function startSynthesisStage(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
  configIndex: number,
  investigated: StageRow,
): Promise<void> {
  const resolved = resolveSynthesisConfig(deps.config, chain, configIndex);
  const agents = [];
  for (const execution of ownExecutions(investigated.executions)) {
    agents.push({
      agentName: execution.agentName,
      agentIndex: execution.agentIndex,
      strategy: execution.backend,
      llmProvider: execution.llmProvider,
      status: execution.status,
      errorMessage: execution.errorMessage,
      events: await listExecutionTimeline(tx, execution.id),
    });
  }
  const { stage, executions, created } = await ensureStage(
    tx,
    {
      sessionId: session.id,
      stageName: `${investigated.stageName}${SYNTHESIS_SUFFIX}`,
      stageIndex: investigated.stageIndex + 1,
      kind: "synthesis",
      expectedAgentCount: 1,
      successPolicy: "all",
    },
    [
      {
        agentName: resolved.agent_name,
        agentIndex: 1,
        kind: "synthesis",
        backend: resolved.llm_backend,
        llmProvider: resolved.llm_provider_name,
      },
    ],
  );
  if (!created) return;
  await openStage(
    deps,
    tx,
    session,
    stage,
    executions,
    formatInvestigationForSynthesis(agents, investigated.stageName),
  );
}

async function summarizeOrComplete(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
  stages: readonly StageRow[],
): Promise<StepOutcome> {
  const finalAnalysis = completedResults(stages).at(-1)?.finalAnalysis ?? "";
  let summary: string | null = null;
  let summaryError: string | null = null;
  // Null unless the summary completed: then its labels (`[]` none, null unreadable).
  let labels: string[] | null = null;
  if (finalAnalysis.trim()) {
    const resolved = resolveExecutiveSummaryConfig(deps.config, chain);
    const { execution, created } = await ensureExecutiveSummaryExecution(tx, session.id, {
      agentName: resolved.agent_name,
      backend: resolved.llm_backend,
      llmProvider: resolved.llm_provider_name,
    });
    if (created) {
      await requestExecutions(deps, tx, session, null, [execution], finalAnalysis);
      return { sessionTerminal: false };
    }
    if (!isTerminal(execution.status)) return { sessionTerminal: false };
    if (execution.status === "completed" && execution.finalAnalysis) {
      summary = execution.finalAnalysis;
      labels = storedLabels(execution.labels);
    } else {
      // Fail-open: the session completes; the reason is kept for the dashboard.
      summaryError = execution.errorMessage ?? `executive summary ${execution.status}`;
    }
  }
  const now = deps.now();
  const applied = await transitionSessionStatus(
    tx,
    session.id,
    ["in_progress"],
    "completed",
    {
      finalAnalysis: finalAnalysis || null,
      executiveSummary: summary,
      executiveSummaryError: summaryError,
      labels: labelsColumn(labels),
      completedAt: now,
      lastInteractionAt: now,
    },
    () => queueSessionStatus(tx, session, "completed", now, { currentStage: null }),
  );
  if (applied) {
    deps.metrics.sessionEnded(session, "completed", now);
    deps.logger.info({ session_id: session.id }, "session completed");
    await startAutoScore(deps, tx, session, chain);
  }
  return { sessionTerminal: applied };
}

/** Ends a session that cannot go on; the chain stops here (fail fast). */
export async function failSession(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  reason: string,
  status: "failed" | "timed_out" | "cancelled" = "failed",
): Promise<void> {
  const now = deps.now();
  const sessionStatus =
    status === "cancelled" ? "cancelled" : status === "timed_out" ? "timed_out" : "failed";
  const stages = await listSessionStages(tx, session.id);
  const results = completedResults(stages.filter((s) => s.kind !== "chat"));
  const attribution = stopAttribution(session, sessionStatus, reason);
  const applied = await transitionSessionStatus(
    tx,
    session.id,
    RUNNING_SESSION_STATUSES,
    sessionStatus,
    {
      errorMessage: reason,
      finalAnalysis: results.at(-1)?.finalAnalysis || null,
      completedAt: now,
      lastInteractionAt: now,
      ...attribution,
    },
    async () => {
      await abortOpenWork(
        deps,
        tx,
        stages,
        sessionStatus === "failed" ? "cancelled" : sessionStatus,
        reason,
      );
      await queueSessionStatus(tx, session, sessionStatus, now, {
        currentStage: null,
        error: reason,
        ...attribution,
      });
    },
  );
  if (!applied) return;
  deps.metrics.sessionEnded(session, sessionStatus, now);
  deps.logger.warn({ session_id: session.id, status: sessionStatus, reason }, "session ended");
}

/**
 * Marks every unfinished execution and stage of the given stages as `status`, with events. A
 * timeout also says why on each of them (`reason`: which limit, how long), as the session does.
 */
export async function abortOpenWork(
  deps: SagaDeps,
  tx: Tx,
  stages: readonly StageRow[],
  status: "cancelled" | "timed_out",
  reason: string,
): Promise<void> {
  const now = deps.now();
  const set = { completedAt: now, ...(status === "timed_out" ? { errorMessage: reason } : {}) };
  const summary = await getExecutiveSummaryExecution(tx, stages[0]?.sessionId ?? "");
  // What the stopped executions were still streaming ends now, before the stage and session
  // statuses: nothing of theirs reaches a viewer after the session ended.
  const open = [...stages.flatMap((s) => s.executions), ...(summary ? [summary] : [])].filter(
    (e) => !isTerminal(e.status),
  );
  const stopped = await endStreamingEvents(
    tx,
    open.map((e) => e.id),
    status,
  );
  for (const event of stopped) await queueTimelineEventCompleted(tx, event);
  for (const stage of stages) {
    for (const execution of stage.executions) {
      if (!isTerminal(execution.status)) {
        await transitionExecutionStatus(tx, execution.id, ACTIVE_EXECUTION_STATUSES, status, set);
      }
    }
    if (!isTerminal(stage.status)) {
      if (await transitionStageStatus(tx, stage.id, ACTIVE_EXECUTION_STATUSES, status, set)) {
        await queueStageStatus(tx, stage, status, now);
        deps.metrics.stageEnded(stage, status, now);
        if (stage.kind === "action") deps.metrics.actionStageEnded("failed");
      }
    }
  }
  if (summary && !isTerminal(summary.status)) {
    await transitionExecutionStatus(tx, summary.id, ACTIVE_EXECUTION_STATUSES, status, set);
  }
}
