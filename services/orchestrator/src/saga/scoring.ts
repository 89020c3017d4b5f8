/**
 * Scoring (#21): an LLM judge of a finished session, run as its own stage ("Evaluation &
 * Learning", kind scoring) after the chain, by any runner. Fail-open: whatever happens to the
 * judge, the session keeps its status; only the score row and the stage say how it went.
 * Automatic runs start in the transaction that completes the session (when the chain's
 * `scoring.enabled` is set, or `defaults.scoring`); on-demand runs come as `scoreRequested`.
 */
import {
  type ChainConfig,
  isScoringEnabled,
  resolveScoringConfig,
  TarsyConfigError,
} from "@tarsy/config";
import type { ScoreRequested } from "@tarsy/contracts";
import {
  type AgentExecution,
  type AlertSession,
  createScore,
  enqueueOutbox,
  ensureStage,
  finishScore,
  getLatestScore,
  getScore,
  getScoreByStage,
  linkScoreStage,
  listSessionAvailableTools,
  listSessionStages,
  listSessionTimeline,
  nextStageIndex,
  SCORING_STAGE_NAME,
  type SessionScore,
  type Tx,
  transitionStageStatus,
} from "@tarsy/db";
import { formatInvestigationContext, investigationOrder } from "../context/investigation.ts";
import { finishSingleAgentStage } from "./chat.ts";
import { sourcedResults } from "./compose.ts";
import type { SagaDeps } from "./deps.ts";
import { queueStageStatus } from "./events.ts";
import { OrphanedWorkError } from "./orphans.ts";
import { withSession } from "./session-lock.ts";
import { scoringTimeoutReason } from "./timeouts.ts";

/** How long the judge may take (the Go TARSy's scoring timeout). */
export const SCORING_TIMEOUT_MS = 10 * 60_000;

/** Called in the transaction that completed the session. */
export async function startAutoScore(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
): Promise<void> {
  if (!isScoringEnabled(deps.config, chain)) return;
  const latest = await getLatestScore(tx, session.id);
  if (latest?.status === "in_progress") return;
  const score = await createScore(tx, { sessionId: session.id, triggeredBy: "auto" });
  await openScoring(deps, tx, session, chain, score);
}

/** `scoreRequested`: the run exists; open its stage (once). */
export async function startRequestedScore(deps: SagaDeps, message: ScoreRequested): Promise<void> {
  await withSession(deps, message.session_id, async (tx, session, locked) => {
    const score = await getScore(tx, message.score_id);
    if (!score || score.sessionId !== session.id) {
      throw new OrphanedWorkError("score", message.score_id);
    }
    // A redelivery: the stage is open already, or the run has ended.
    if (score.status !== "in_progress" || score.stageId !== null) return;
    const chain = locked.config.chains.get(session.chainId);
    if (!chain) {
      await endScore(
        locked,
        tx,
        score,
        false,
        `chain "${session.chainId}" is no longer configured`,
      );
      return;
    }
    await openScoring(locked, tx, session, chain, score);
  });
  await deps.flushOutbox();
}

async function openScoring(
  deps: SagaDeps,
  tx: Tx,
  session: AlertSession,
  chain: ChainConfig,
  score: SessionScore,
): Promise<void> {
  let agent: { agentName: string; backend: string; llmProvider: string };
  try {
    const resolved = resolveScoringConfig(deps.config, chain);
    agent = {
      agentName: resolved.agent_name,
      backend: resolved.llm_backend,
      llmProvider: resolved.llm_provider_name,
    };
  } catch (err) {
    if (!(err instanceof TarsyConfigError)) throw err;
    await endScore(deps, tx, score, false, err.message);
    return;
  }
  const context = await scoringContext(tx, session.id);
  const { stage, executions, created } = await ensureStage(
    tx,
    {
      sessionId: session.id,
      stageName: SCORING_STAGE_NAME,
      stageIndex: await nextStageIndex(tx, session.id),
      kind: "scoring",
      expectedAgentCount: 1,
    },
    [{ ...agent, agentIndex: 1, kind: "scoring" }],
  );
  if (!created) return;
  await linkScoreStage(tx, score.id, stage.id);
  const now = deps.now();
  await transitionStageStatus(tx, stage.id, ["pending"], "active", { startedAt: now });
  await queueStageStatus(tx, stage, "started", now);
  for (const execution of executions) {
    await enqueueOutbox(tx, "executionRequested", {
      v: 1,
      session_id: session.id,
      stage_id: stage.id,
      execution_id: execution.id,
      kind: "scoring",
      agent_name: execution.agentName,
      agent_index: execution.agentIndex,
      context,
      deadline_at: new Date(now.getTime() + SCORING_TIMEOUT_MS).toISOString(),
      deadline_reason: scoringTimeoutReason(SCORING_TIMEOUT_MS),
      requested_at: now.toISOString(),
    });
  }
  await queueScoreUpdated(tx, { ...score, stageId: stage.id }, now);
  deps.logger.info(
    { session_id: session.id, score_id: score.id, stage_id: stage.id },
    "scoring started",
  );
}

/** The judge's execution ended: the stage takes its status, the run ends with it. */
export async function finishScoring(
  deps: SagaDeps,
  tx: Tx,
  stageId: string,
  execution: Pick<AgentExecution, "status" | "errorMessage">,
): Promise<void> {
  await finishSingleAgentStage(deps, tx, stageId);
  const score = await getScoreByStage(tx, stageId);
  if (!score) return;
  const succeeded = execution.status === "completed";
  await endScore(
    deps,
    tx,
    score,
    succeeded,
    succeeded ? null : (execution.errorMessage ?? `scoring ${execution.status}`),
  );
}

async function endScore(
  deps: SagaDeps,
  tx: Tx,
  score: SessionScore,
  succeeded: boolean,
  error: string | null,
): Promise<void> {
  const now = deps.now();
  const ended = await finishScore(tx, score.id, { succeeded, error, at: now });
  if (!ended) return;
  await queueScoreUpdated(tx, ended, now);
  const log = { session_id: score.sessionId, score_id: score.id, status: ended.status };
  if (ended.status === "completed") deps.logger.info(log, "scoring completed");
  else deps.logger.warn({ ...log, reason: ended.errorMessage }, "scoring failed");
}

async function queueScoreUpdated(tx: Tx, score: SessionScore, at: Date): Promise<void> {
  await enqueueOutbox(tx, "sessionScoreUpdated", {
    v: 1,
    type: "session.score_updated",
    session_id: score.sessionId,
    score_id: score.id,
    scoring_status: score.status,
    total_score: score.status === "completed" ? score.totalScore : null,
    timestamp: at.toISOString(),
  });
}

/**
 * What the judge (and the memory reflector) reads besides the alert and runbook: the
 * investigation (chain stages and the executive summary, not chat turns, earlier scoring nor
 * the compose stage's process), the amended report when a compose stage wrote the session's
 * final analysis, and the tools it had.
 */
export async function scoringContext(tx: Tx, sessionId: string): Promise<string> {
  const stages = await listSessionStages(tx, sessionId);
  const investigated = new Set(
    stages
      .filter((s) => s.kind === "investigation" || s.kind === "action" || s.kind === "synthesis")
      .map((s) => s.id),
  );
  const agentIndex = new Map(
    stages.flatMap((s) => s.executions.map((e) => [e.id, e.agentIndex] as const)),
  );
  const events = (await listSessionTimeline(tx, sessionId)).filter((e) =>
    e.stageId === null ? e.eventType === "executive_summary" : investigated.has(e.stageId),
  );
  const tools = await listSessionAvailableTools(tx, sessionId);
  const composed = sourcedResults(stages.filter((s) => s.kind !== "chat")).at(-1);
  const amended =
    composed?.source === "compose"
      ? ["## Final Analysis (amended report)", composed.finalAnalysis.trim()]
      : [];
  const toolLines = [...tools].flatMap(([server, list]) =>
    list.map((t) => `- ${server}.${t.name}${t.description ? `: ${t.description}` : ""}`),
  );
  return [
    "## Investigation Timeline",
    formatInvestigationContext(investigationOrder(events, agentIndex)),
    ...amended,
    "## Available Tools",
    toolLines.length > 0
      ? `The agents could call these tools:\n\n${toolLines.join("\n")}`
      : "The agents had no tools.",
  ].join("\n\n");
}
