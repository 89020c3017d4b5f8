/**
 * The feedback reflector of investigation memory (#24, the Go TARSy's ADR-0014): a review
 * completed with written feedback asks, once per session and feedback text, for one LLM
 * reflection that turns the feedback into memories (confidence 0.9) and reinforces or
 * deprecates existing ones. The request is a row plus a `feedbackSubmitted` outbox message in
 * the review's transaction; the orchestrator adds the reflector's execution to the session's
 * scoring stage; the runner writes the memories together with `applied_at`, so a redelivered
 * message or execution never writes them twice.
 */
import { createHash } from "node:crypto";
import { type DbClient, inTransaction, type Tx } from "./client.ts";
import type {
  AgentExecution,
  AlertSession,
  MemoryFeedbackReflection,
  Stage,
} from "./generated/prisma/client.ts";
import {
  createMemories,
  deprecateMemories,
  FEEDBACK_CONFIDENCE,
  type InvestigationMemory,
  type MemoryScope,
  type NewMemory,
  reinforceMemories,
} from "./memories.ts";
import { enqueueOutbox, type OutboxEntry } from "./outbox.ts";

export type { MemoryFeedbackReflection };

/** The reflector's agent name on its execution (the Go TARSy's). */
export const FEEDBACK_REFLECTOR_AGENT = "FeedbackReflector";

/** The feedback as it is reflected on: surrounding whitespace is no new feedback. */
export function normalizeFeedback(text: string | null | undefined): string {
  return (text ?? "").trim();
}

/**
 * The idempotency key of a reflection: sha256 of the session id and the normalized feedback
 * text. The same text on the same session (a redelivery, a repeated complete, an unchanged
 * `update_feedback`) is one reflection; a new text is a new one.
 */
export function feedbackReflectionKey(sessionId: string, feedback: string): string {
  return createHash("sha256")
    .update(`${sessionId.toLowerCase()}\n${normalizeFeedback(feedback)}`)
    .digest("hex");
}

/**
 * Asks for a reflection on the session's current feedback, inside the review's transaction:
 * a row (unless one exists for this text) and its `feedbackSubmitted` work message. Returns
 * the outbox entry to publish, or null when there is nothing (new) to reflect on.
 */
export async function requestFeedbackReflection(
  tx: Tx,
  session: Pick<AlertSession, "id" | "investigationFeedback" | "qualityRating">,
  actor: string,
  at: Date,
): Promise<OutboxEntry<"feedbackSubmitted"> | null> {
  const feedback = normalizeFeedback(session.investigationFeedback);
  if (feedback === "") return null;
  const idempotencyKey = feedbackReflectionKey(session.id, feedback);
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO memory_feedback_reflections
      (session_id, idempotency_key, feedback, quality_rating, actor, created_at)
    VALUES (${session.id}::uuid, ${idempotencyKey}, ${feedback},
            ${session.qualityRating}::quality_rating, ${actor}, ${at})
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id`;
  const row = inserted[0];
  if (!row) return null;
  return enqueueOutbox(tx, "feedbackSubmitted", {
    v: 1,
    session_id: session.id,
    reflection_id: row.id,
    submitted_by: actor,
    submitted_at: at.toISOString(),
  });
}

export function getFeedbackReflection(
  client: DbClient,
  id: string,
): Promise<MemoryFeedbackReflection | null> {
  return client.memoryFeedbackReflection.findUnique({ where: { id } });
}

/** A session's reflections on feedback, oldest first. */
export function listFeedbackReflections(
  client: DbClient,
  sessionId: string,
): Promise<MemoryFeedbackReflection[]> {
  return client.memoryFeedbackReflection.findMany({
    where: { sessionId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** The session's newest scoring stage (an on-demand re-score makes a later one), if any. */
export function latestScoringStage(client: DbClient, sessionId: string): Promise<Stage | null> {
  return client.stage.findFirst({
    where: { sessionId, kind: "scoring" },
    orderBy: { stageIndex: "desc" },
  });
}

/** Nothing runs for this reflection (memory off, no scoring stage, chain gone). */
export async function skipFeedbackReflection(
  client: DbClient,
  id: string,
  reason: string,
  at: Date,
): Promise<boolean> {
  const { count } = await client.memoryFeedbackReflection.updateMany({
    where: { id, status: "pending" },
    data: { status: "skipped", reason, completedAt: at },
  });
  return count > 0;
}

export interface ReflectorAgent {
  backend: string;
  llmProvider: string;
}

/**
 * Adds the reflector's execution to the scoring stage (after its other executions) and
 * marks the reflection running, once: null when the reflection is no longer pending.
 */
export async function openFeedbackReflection(
  tx: Tx,
  reflection: Pick<MemoryFeedbackReflection, "id" | "sessionId">,
  stage: Pick<Stage, "id">,
  agent: ReflectorAgent,
): Promise<AgentExecution | null> {
  const last = await tx.agentExecution.findFirst({
    where: { stageId: stage.id },
    orderBy: { agentIndex: "desc" },
    select: { agentIndex: true },
  });
  const execution = await tx.agentExecution.create({
    data: {
      stageId: stage.id,
      sessionId: reflection.sessionId,
      agentName: FEEDBACK_REFLECTOR_AGENT,
      agentIndex: (last?.agentIndex ?? 0) + 1,
      kind: "feedback_reflection",
      backend: agent.backend,
      llmProvider: agent.llmProvider,
    },
  });
  const { count } = await tx.memoryFeedbackReflection.updateMany({
    where: { id: reflection.id, status: "pending" },
    data: { status: "running", executionId: execution.id },
  });
  if (count === 0) {
    await tx.agentExecution.delete({ where: { id: execution.id } });
    return null;
  }
  return execution;
}

/** The reflector's execution ended: the reflection takes its outcome (never the session). */
export async function finishFeedbackReflection(
  client: DbClient,
  executionId: string,
  outcome: { succeeded: boolean; error: string | null; at: Date },
): Promise<MemoryFeedbackReflection | null> {
  const { count } = await client.memoryFeedbackReflection.updateMany({
    where: { executionId, status: "running" },
    data: {
      status: outcome.succeeded ? "completed" : "failed",
      reason: outcome.succeeded ? null : outcome.error,
      completedAt: outcome.at,
    },
  });
  if (count === 0) return null;
  return client.memoryFeedbackReflection.findFirst({ where: { executionId } });
}

export interface FeedbackReflectionChanges {
  /** New memories (stored at FEEDBACK_CONFIDENCE whatever they say). */
  create: readonly Omit<NewMemory, "confidence">[];
  /** Ids of memories the feedback confirms / contradicts (only ones the reflector was shown). */
  reinforce: readonly string[];
  deprecate: readonly string[];
}

export interface AppliedFeedbackReflection {
  /** False when an earlier attempt had applied it already (nothing was written now). */
  applied: boolean;
  created: InvestigationMemory[];
  reinforced: number;
  deprecated: number;
}

/**
 * Writes what the reflector answered, exactly once per reflection: `applied_at` and the
 * memory changes commit together, so a redelivered execution (kill -9 after the write) finds
 * it applied and writes nothing. Memories have the session as their source.
 */
export function applyFeedbackReflection(
  client: DbClient,
  reflectionId: string,
  scope: MemoryScope,
  changes: FeedbackReflectionChanges,
  at: Date = new Date(),
): Promise<AppliedFeedbackReflection> {
  return inTransaction(client, async (tx) => {
    const claimed = await tx.memoryFeedbackReflection.updateMany({
      where: { id: reflectionId, appliedAt: null },
      data: { appliedAt: at },
    });
    if (claimed.count === 0) {
      const done = await tx.memoryFeedbackReflection.findUnique({ where: { id: reflectionId } });
      return {
        applied: false,
        created: [],
        reinforced: done?.memoriesReinforced ?? 0,
        deprecated: done?.memoriesDeprecated ?? 0,
      };
    }
    const created = await createMemories(
      tx,
      scope,
      changes.create.map((m) => ({ ...m, confidence: FEEDBACK_CONFIDENCE })),
    );
    const reinforced = await reinforceMemories(tx, scope.project, changes.reinforce, at);
    const deprecated = await deprecateMemories(tx, scope.project, changes.deprecate);
    await tx.memoryFeedbackReflection.update({
      where: { id: reflectionId },
      data: {
        memoriesCreated: created.length,
        memoriesReinforced: reinforced,
        memoriesDeprecated: deprecated,
      },
    });
    return { applied: true, created, reinforced, deprecated };
  });
}
