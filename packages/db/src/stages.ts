/** Stage and AgentExecution rows: idempotent creation and conditional status transitions. */
import {
  ACTIVE_EXECUTION_STATUSES,
  type ExecutionKind,
  type ExecutionStatus,
  type ParallelType,
  type SuccessPolicy,
} from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import type { AgentExecution, Prisma, Stage, StageKind } from "./generated/prisma/client.ts";

export interface StageInput {
  readonly sessionId: string;
  readonly stageName: string;
  /** 1-based position in the session. */
  readonly stageIndex: number;
  readonly kind?: StageKind;
  readonly expectedAgentCount?: number;
  readonly parallelType?: ParallelType | null;
  readonly successPolicy?: SuccessPolicy | null;
  readonly chatId?: string | null;
  readonly chatUserMessageId?: string | null;
}

export interface ExecutionInput {
  readonly agentName: string;
  /** 1-based position within the stage. */
  readonly agentIndex: number;
  readonly kind?: ExecutionKind;
  readonly iterationStrategy?: string | null;
  readonly backend?: string | null;
  readonly llmProvider?: string | null;
}

export interface StageWithExecutions {
  readonly stage: Stage;
  readonly executions: AgentExecution[];
  /** False when the stage already existed (a redelivered handler): nothing was created. */
  readonly created: boolean;
}

/**
 * Creates a stage and its executions in one transaction. Idempotent: (session, stageIndex)
 * is unique, so a repeat returns the existing stage and executions with `created: false`.
 */
export function ensureStage(
  client: DbClient,
  stage: StageInput,
  executions: readonly ExecutionInput[],
): Promise<StageWithExecutions> {
  return inTransaction(client, async (tx) => {
    const inserted = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO stages (session_id, stage_name, stage_index, kind, expected_agent_count,
                          parallel_type, success_policy, chat_id, chat_user_message_id)
      VALUES (${stage.sessionId}::uuid, ${stage.stageName}, ${stage.stageIndex},
              ${stage.kind ?? "investigation"}::stage_kind,
              ${stage.expectedAgentCount ?? executions.length},
              ${stage.parallelType ?? null}::parallel_type,
              ${stage.successPolicy ?? null}::success_policy,
              ${stage.chatId ?? null}::uuid, ${stage.chatUserMessageId ?? null}::uuid)
      ON CONFLICT (session_id, stage_index) DO NOTHING
      RETURNING id`;
    const row = await tx.stage.findUniqueOrThrow({
      where: { sessionId_stageIndex: { sessionId: stage.sessionId, stageIndex: stage.stageIndex } },
    });
    const created = inserted.length === 1;
    if (created && executions.length > 0) {
      await tx.agentExecution.createMany({
        data: executions.map((e) => ({
          stageId: row.id,
          sessionId: stage.sessionId,
          agentName: e.agentName,
          agentIndex: e.agentIndex,
          kind: e.kind ?? (stage.kind === "chat" ? "chat" : (stage.kind ?? "investigation")),
          iterationStrategy: e.iterationStrategy ?? null,
          backend: e.backend ?? null,
          llmProvider: e.llmProvider ?? null,
        })),
      });
    }
    const rows = await tx.agentExecution.findMany({
      where: { stageId: row.id },
      orderBy: { agentIndex: "asc" },
    });
    return { stage: row, executions: rows, created };
  });
}

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

export type StageUpdate = Pick<
  Prisma.StageUpdateManyMutationInput,
  "errorMessage" | "startedAt" | "completedAt"
>;

/** Moves a stage to `to` only if its status is one of `from`. Returns whether it applied. */
export async function transitionStageStatus(
  client: DbClient,
  id: string,
  from: readonly ExecutionStatus[],
  to: ExecutionStatus,
  set: StageUpdate = {},
): Promise<boolean> {
  const { count } = await client.stage.updateMany({
    where: { id, status: { in: [...from] } },
    data: { ...set, status: to },
  });
  return count === 1;
}

export type ExecutionUpdate = Pick<
  Prisma.AgentExecutionUpdateManyMutationInput,
  | "errorMessage"
  | "finalAnalysis"
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
           original_llm_provider = NULL, original_llm_backend = NULL
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
  change: { originalProvider: string; originalBackend: string; provider: string; backend: string },
): Promise<void> {
  await client.agentExecution.updateMany({
    where: { id },
    data: {
      llmProvider: change.provider,
      backend: change.backend,
      originalLlmProvider: change.originalProvider,
      originalBackend: change.originalBackend,
    },
  });
}

/** Marks an active execution as alive (for recovery of work lost with a crashed runner). */
export async function heartbeatExecution(client: DbClient, id: string): Promise<boolean> {
  const { count } = await client.agentExecution.updateMany({
    where: { id, status: "active" },
    data: { lastHeartbeatAt: new Date() },
  });
  return count === 1;
}

/** Active executions whose last heartbeat is older than `before`. */
export function findStaleExecutions(client: DbClient, before: Date): Promise<AgentExecution[]> {
  return client.agentExecution.findMany({
    where: { status: "active", lastHeartbeatAt: { lt: before } },
    orderBy: { lastHeartbeatAt: "asc" },
  });
}

export function getStage(client: DbClient, id: string): Promise<Stage | null> {
  return client.stage.findUnique({ where: { id } });
}

export function getExecution(client: DbClient, id: string): Promise<AgentExecution | null> {
  return client.agentExecution.findUnique({ where: { id } });
}

export function listStageExecutions(client: DbClient, stageId: string): Promise<AgentExecution[]> {
  return client.agentExecution.findMany({ where: { stageId }, orderBy: { agentIndex: "asc" } });
}

/** The session's stages in order, each with its executions. */
export function listSessionStages(
  client: DbClient,
  sessionId: string,
): Promise<(Stage & { executions: AgentExecution[] })[]> {
  return client.stage.findMany({
    where: { sessionId },
    orderBy: { stageIndex: "asc" },
    include: { executions: { orderBy: { agentIndex: "asc" } } },
  });
}

/** Next free 1-based stage index of a session. */
export async function nextStageIndex(client: DbClient, sessionId: string): Promise<number> {
  const { _max } = await client.stage.aggregate({
    where: { sessionId },
    _max: { stageIndex: true },
  });
  return (_max.stageIndex ?? 0) + 1;
}
