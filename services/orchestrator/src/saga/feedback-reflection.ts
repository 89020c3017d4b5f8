/**
 * The feedback reflector (investigation memory, #24): a review completed with written
 * feedback asked for a reflection (`feedbackSubmitted`, once per session and feedback text).
 * Its execution joins the session's newest scoring stage, as the Go TARSy runs it, and any
 * runner answers it. Fail-open: the reflection never changes the session, its review, its
 * score or its stage; only the reflection row and the execution say how it went.
 */
import { formatDuration, resolveScoringConfig, TarsyConfigError } from "@tarsy/config";
import type { ExecutionFinished, FeedbackSubmitted } from "@tarsy/contracts";
import {
  enqueueOutbox,
  finishFeedbackReflection,
  getFeedbackReflection,
  latestScoringStage,
  openFeedbackReflection,
  skipFeedbackReflection,
  type Tx,
} from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";
import { OrphanedWorkError } from "./orphans.ts";
import { scoringContext } from "./scoring.ts";
import { withSession } from "./session-lock.ts";

/** How long the reflector may take (the Go TARSy's feedback reflector timeout). */
export const FEEDBACK_REFLECTION_TIMEOUT_MS = 3 * 60_000;

export function feedbackReflectionTimeoutReason(limitMs: number): string {
  return `feedback reflection timed out after ${formatDuration(limitMs)}`;
}

/** `feedbackSubmitted`: request the reflector's execution (once), or say why nothing runs. */
export async function startFeedbackReflection(
  deps: SagaDeps,
  message: FeedbackSubmitted,
): Promise<void> {
  await withSession(deps, message.session_id, async (tx, session, locked) => {
    const reflection = await getFeedbackReflection(tx, message.reflection_id);
    if (!reflection || reflection.sessionId !== session.id) {
      throw new OrphanedWorkError("feedback_reflection", message.reflection_id);
    }
    // A redelivery: its execution was requested already, or it ended.
    if (reflection.status !== "pending") return;
    const log = { session_id: session.id, reflection_id: reflection.id };
    const skip = async (reason: string) => {
      await skipFeedbackReflection(tx, reflection.id, reason, locked.now());
      locked.logger.info({ ...log, reason }, "feedback reflection skipped");
    };
    if (!locked.config.defaults.memory.enabled) return skip("investigation memory is disabled");
    const chain = locked.config.chains.get(session.chainId);
    if (!chain) return skip(`chain "${session.chainId}" is no longer configured`);
    const stage = await latestScoringStage(tx, session.id);
    if (!stage) return skip("the session was never scored (no scoring stage)");
    let agent: { backend: string; llmProvider: string };
    try {
      const resolved = resolveScoringConfig(locked.config, chain);
      agent = { backend: resolved.llm_backend, llmProvider: resolved.llm_provider_name };
    } catch (err) {
      if (!(err instanceof TarsyConfigError)) throw err;
      return skip(err.message);
    }
    const execution = await openFeedbackReflection(tx, reflection, stage, agent);
    if (!execution) return;
    const now = locked.now();
    await enqueueOutbox(tx, "executionRequested", {
      v: 1,
      session_id: session.id,
      stage_id: stage.id,
      execution_id: execution.id,
      kind: "feedback_reflection",
      agent_name: execution.agentName,
      agent_index: execution.agentIndex,
      context: await scoringContext(tx, session.id),
      feedback: {
        reflection_id: reflection.id,
        text: reflection.feedback,
        quality_rating: reflection.qualityRating,
      },
      deadline_at: new Date(now.getTime() + FEEDBACK_REFLECTION_TIMEOUT_MS).toISOString(),
      deadline_reason: feedbackReflectionTimeoutReason(FEEDBACK_REFLECTION_TIMEOUT_MS),
      requested_at: now.toISOString(),
    });
    locked.logger.info(
      { ...log, stage_id: stage.id, execution_id: execution.id },
      "feedback reflection started",
    );
  });
  await deps.flushOutbox();
}

/** The reflector's execution ended: its reflection takes the outcome, nothing else does. */
export async function endFeedbackReflection(
  deps: SagaDeps,
  tx: Tx,
  message: Pick<ExecutionFinished, "execution_id" | "status" | "error" | "session_id">,
): Promise<void> {
  const succeeded = message.status === "completed";
  const ended = await finishFeedbackReflection(tx, message.execution_id, {
    succeeded,
    error: succeeded ? null : (message.error ?? `feedback reflection ${message.status}`),
    at: deps.now(),
  });
  if (!ended) return;
  const log = {
    session_id: message.session_id,
    reflection_id: ended.id,
    execution_id: message.execution_id,
    created: ended.memoriesCreated,
    reinforced: ended.memoriesReinforced,
    deprecated: ended.memoriesDeprecated,
  };
  if (succeeded) deps.logger.info(log, "feedback reflection completed");
  else deps.logger.warn({ ...log, reason: ended.reason }, "feedback reflection failed");
}
