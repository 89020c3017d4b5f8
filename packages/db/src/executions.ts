/**
 * AgentExecution rows (attempts, heartbeats, conditional status transitions) and each
 * execution's conversation (Message: linear and numbered 1, 2, 3, …).
 */
import {
  ACTIVE_EXECUTION_STATUSES,
  type ExecutionStatus,
  type MessageRole,
} from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import type { AgentExecution, Message, Prisma, TimelineEvent } from "./generated/prisma/client.ts";
import type { ExecutionInput } from "./stages.ts";
import { completeTimelineEvent } from "./timeline.ts";

/**
 * The session's executive-summary execution (no stage), created once: a repeat returns the
 * existing row with `created: false`.
 */
export async function ensureExecutiveSummaryExecution(
  client: DbClient,
  sessionId: string,
  input: Omit<ExecutionInput, "agentIndex" | "kind">,
): Promise<{ execution: AgentExecution; created: boolean }> {
  const inserted = await client.$queryRaw<{ id: string }[]>`
    INSERT INTO agent_executions (session_id, agent_name, agent_index, kind, iteration_strategy,
                                  backend, llm_provider)
    VALUES (${sessionId}::uuid, ${input.agentName}, 1, 'executive_summary'::execution_kind,
            ${input.iterationStrategy ?? null}, ${input.backend ?? null}, ${input.llmProvider ?? null})
    ON CONFLICT (session_id) WHERE kind = 'executive_summary' DO NOTHING
    RETURNING id`;
  const execution = await client.agentExecution.findFirstOrThrow({
    where: { sessionId, kind: "executive_summary" },
  });
  return { execution, created: inserted.length === 1 };
}

export type ExecutionUpdate = Pick<
  Prisma.AgentExecutionUpdateManyMutationInput,
  | "errorMessage"
  | "finalAnalysis"
  | "actionsExecuted"
  | "forcedConclusion"
  | "labels"
  | "startedAt"
  | "completedAt"
  | "inputTokens"
  | "outputTokens"
  | "thinkingTokens"
  | "totalTokens"
  | "llmProvider"
  | "iterationStrategy"
  | "backend"
>;

/** Moves an execution to `to` only if its status is one of `from`. Returns whether it applied. */
export async function transitionExecutionStatus(
  client: DbClient,
  id: string,
  from: readonly ExecutionStatus[],
  to: ExecutionStatus,
  set: ExecutionUpdate = {},
): Promise<boolean> {
  const { count } = await client.agentExecution.updateMany({
    where: { id, status: { in: [...from] } },
    data: { ...set, status: to },
  });
  return count === 1;
}

/**
 * A runner takes an execution: pending → active (or active → active on a redelivery after a
 * crash), counting the attempt. Returns the execution, or null if it is already terminal.
 */
export async function startExecution(
  client: DbClient,
  id: string,
  runnerId: string,
): Promise<AgentExecution | null> {
  const now = new Date();
  const { count } = await client.agentExecution.updateMany({
    where: { id, status: { in: [...ACTIVE_EXECUTION_STATUSES] } },
    data: {
      status: "active",
      runnerId,
      attempt: { increment: 1 },
      lastHeartbeatAt: now,
    },
  });
  if (count === 0) return null;
  await client.agentExecution.updateMany({
    where: { id, startedAt: null },
    data: { startedAt: now },
  });
  // A new attempt starts on the configured provider again (fallback is per attempt).
  await client.$executeRaw`
    UPDATE agent_executions
       SET llm_provider = original_llm_provider, backend = original_llm_backend,
           reasoning_effort = original_reasoning_effort,
           original_llm_provider = NULL, original_llm_backend = NULL,
           original_reasoning_effort = NULL
     WHERE id = ${id}::uuid AND original_llm_provider IS NOT NULL`;
  return client.agentExecution.findUnique({ where: { id } });
}

/**
 * The execution moved to a fallback provider: `llm_provider`/`backend` name the provider in
 * use, `original_*` what it started with (kept from the first switch of the attempt).
 */
export async function recordExecutionFallback(
  client: DbClient,
  id: string,
  change: {
    originalProvider: string;
    originalBackend: string;
    provider: string;
    backend: string;
    /** The efforts of the original and of the fallback provider (null: the provider's default). */
    originalReasoningEffort?: string | null;
    reasoningEffort?: string | null;
  },
): Promise<void> {
  await client.agentExecution.updateMany({
    where: { id },
    data: {
      llmProvider: change.provider,
      backend: change.backend,
      originalLlmProvider: change.originalProvider,
      originalBackend: change.originalBackend,
      reasoningEffort: change.reasoningEffort ?? null,
      originalReasoningEffort: change.originalReasoningEffort ?? null,
    },
  });
}

/**
 * The reasoning effort an attempt runs with, recorded when it starts (the configured one:
 * `startExecution` put the original provider back).
 */
export async function recordExecutionReasoningEffort(
  client: DbClient,
  id: string,
  reasoningEffort: string | null,
): Promise<void> {
  await client.agentExecution.updateMany({ where: { id }, data: { reasoningEffort } });
}

/**
 * Marks an active execution as alive while `attempt` is still its current one (for recovery
 * of work lost with a crashed runner). Returns false once the attempt is over or superseded.
 */
export async function heartbeatExecution(
  client: DbClient,
  id: string,
  attempt: number,
): Promise<boolean> {
  const { count } = await client.agentExecution.updateMany({
    where: { id, attempt, status: "active" },
    data: { lastHeartbeatAt: new Date() },
  });
  return count === 1;
}

/**
 * The runner ends its attempt: pending/active → `to`, only while `attempt` is still the
 * current one, so a superseded attempt cannot overwrite its successor. Returns whether it applied.
 */
export async function finishExecutionAttempt(
  client: DbClient,
  id: string,
  attempt: number,
  to: ExecutionStatus,
  set: ExecutionUpdate = {},
): Promise<boolean> {
  const { count } = await client.agentExecution.updateMany({
    where: { id, attempt, status: { in: [...ACTIVE_EXECUTION_STATUSES] } },
    data: { ...set, status: to },
  });
  return count === 1;
}

/**
 * Clears what an interrupted earlier attempt left (a runner crash): its conversation is
 * deleted and its still-streaming timeline events end `failed`, marked `interrupted` with
 * `attempt`. Returns the events it ended.
 */
export function discardInterruptedAttempt(
  client: DbClient,
  executionId: string,
  attempt: number,
): Promise<TimelineEvent[]> {
  return inTransaction(client, async (tx) => {
    await tx.message.deleteMany({ where: { executionId } });
    return endInterruptedEvents(tx, executionId, attempt);
  });
}

/**
 * The tokens an execution's LLM calls used so far, summed over its stored interactions (what a
 * resumed attempt goes on counting from after an interrupted one, whose totals were never
 * written).
 */
export async function executionLlmUsage(
  client: DbClient,
  executionId: string,
): Promise<{ input: number; output: number; thinking: number; total: number }> {
  const { _sum } = await client.lLMInteraction.aggregate({
    where: { executionId },
    _sum: { inputTokens: true, outputTokens: true, thinkingTokens: true, totalTokens: true },
  });
  return {
    input: _sum.inputTokens ?? 0,
    output: _sum.outputTokens ?? 0,
    thinking: _sum.thinkingTokens ?? 0,
    total: _sum.totalTokens ?? 0,
  };
}

/**
 * A resumed execution (a suspended parent woken by its sub-agents, or such a resumption
 * redelivered after a crash) keeps its conversation: only timeline events an interrupted
 * attempt left streaming end `failed`, marked `interrupted` with `attempt`.
 */
export function endInterruptedEvents(
  client: DbClient,
  executionId: string,
  attempt: number,
): Promise<TimelineEvent[]> {
  return inTransaction(client, async (tx) => {
    const open = await tx.timelineEvent.findMany({ where: { executionId, status: "streaming" } });
    const ended: TimelineEvent[] = [];
    for (const event of open) {
      const done = await completeTimelineEvent(tx, event.id, {
        status: "failed",
        metadata: { interrupted: true, attempt },
      });
      if (done) ended.push(done);
    }
    return ended;
  });
}

/** Fails every execution of a stage at once (a stage that could not start). */
export async function failStageExecutions(
  client: DbClient,
  stageId: string,
  errorMessage: string,
  completedAt: Date,
): Promise<void> {
  await client.agentExecution.updateMany({
    where: { stageId },
    data: { status: "failed", errorMessage, completedAt },
  });
}

export function getExecution(client: DbClient, id: string): Promise<AgentExecution | null> {
  return client.agentExecution.findUnique({ where: { id } });
}

/** The execution when it belongs to `sessionId`, else null. */
export function getSessionExecution(
  client: DbClient,
  sessionId: string,
  executionId: string,
): Promise<AgentExecution | null> {
  return client.agentExecution.findFirst({ where: { id: executionId, sessionId } });
}

/** Every execution of a session (stages in order, then agents; the executive summary last). */
export function listSessionExecutions(
  client: DbClient,
  sessionId: string,
): Promise<AgentExecution[]> {
  return client.agentExecution.findMany({
    where: { sessionId },
    orderBy: [{ stage: { stageIndex: "asc" } }, { agentIndex: "asc" }, { createdAt: "asc" }],
  });
}

/** The session's executive-summary execution, or null before it was created. */
export function getExecutiveSummaryExecution(
  client: DbClient,
  sessionId: string,
): Promise<AgentExecution | null> {
  return client.agentExecution.findFirst({ where: { sessionId, kind: "executive_summary" } });
}

export interface ToolCallData {
  readonly id: string;
  readonly name: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
}

export interface MessageInput {
  readonly role: MessageRole;
  readonly content: string;
  readonly toolCalls?: readonly ToolCallData[] | null;
  readonly toolCallId?: string | null;
  readonly toolName?: string | null;
  /** Assistant messages: opaque reasoning-continuity data (see the schema). */
  readonly continuity?: Prisma.InputJsonValue | null;
}

export interface ExecutionRef {
  readonly sessionId: string;
  readonly stageId: string | null;
  readonly executionId: string;
}

/**
 * Appends messages to an execution's conversation with the next sequence numbers. The
 * execution row is locked meanwhile, so concurrent appends queue instead of colliding.
 */
export function appendMessages(
  client: DbClient,
  ref: ExecutionRef,
  messages: readonly MessageInput[],
): Promise<Message[]> {
  return inTransaction(client, async (tx) => {
    await tx.$queryRaw`SELECT id FROM agent_executions WHERE id = ${ref.executionId}::uuid FOR UPDATE`;
    const { _max } = await tx.message.aggregate({
      where: { executionId: ref.executionId },
      _max: { sequenceNumber: true },
    });
    const first = (_max.sequenceNumber ?? 0) + 1;
    const created: Message[] = [];
    for (const [offset, m] of messages.entries()) {
      created.push(
        await tx.message.create({
          data: {
            sessionId: ref.sessionId,
            stageId: ref.stageId,
            executionId: ref.executionId,
            sequenceNumber: first + offset,
            role: m.role,
            content: m.content,
            toolCalls: (m.toolCalls ?? undefined) as Prisma.InputJsonValue | undefined,
            toolCallId: m.toolCallId ?? null,
            toolName: m.toolName ?? null,
            ...(m.continuity != null && { continuity: m.continuity }),
          },
        }),
      );
    }
    return created;
  });
}

/**
 * Appends messages to the conversation and, in the same transaction, marks the sub-agent
 * outcomes they carry as delivered: a crash never gives the parent an outcome twice.
 */
export function appendMessagesDelivering(
  client: DbClient,
  ref: ExecutionRef,
  messages: readonly MessageInput[],
  deliveredSubAgentIds: readonly string[],
): Promise<Message[]> {
  return inTransaction(client, async (tx) => {
    const created = await appendMessages(tx, ref, messages);
    if (deliveredSubAgentIds.length > 0) {
      await tx.agentExecution.updateMany({
        where: { id: { in: [...deliveredSubAgentIds] }, resultDeliveredAt: null },
        data: { resultDeliveredAt: new Date() },
      });
    }
    return created;
  });
}

/** The conversation in order; with `throughMessageId`, only up to and including that message. */
export async function listMessages(
  client: DbClient,
  executionId: string,
  throughMessageId?: string,
): Promise<Message[]> {
  let maxSequence: number | undefined;
  if (throughMessageId !== undefined) {
    const last = await client.message.findUnique({ where: { id: throughMessageId } });
    if (last === null || last.executionId !== executionId) return [];
    maxSequence = last.sequenceNumber;
  }
  return client.message.findMany({
    where: {
      executionId,
      ...(maxSequence === undefined ? {} : { sequenceNumber: { lte: maxSequence } }),
    },
    orderBy: { sequenceNumber: "asc" },
  });
}
