/** Stage rows: idempotent creation (with their executions), lookups and conditional status transitions. */
import {
  type ExecutionKind,
  type ExecutionStatus,
  type ParallelType,
  type SuccessPolicy,
  TERMINAL_EXECUTION_STATUSES,
} from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import type { AgentExecution, Prisma, Stage, StageKind } from "./generated/prisma/client.ts";
import { wipeChatStageUserToken } from "./user-tokens.ts";

export interface StageInput {
  /** The stage's id when chosen up front (a chat turn's), else the database makes one. */
  readonly id?: string;
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
      INSERT INTO stages (id, session_id, stage_name, stage_index, kind, expected_agent_count,
                          parallel_type, success_policy, chat_id, chat_user_message_id)
      VALUES (COALESCE(${stage.id ?? null}::uuid, gen_random_uuid()), ${stage.sessionId}::uuid, ${stage.stageName}, ${stage.stageIndex},
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

export type StageUpdate = Pick<
  Prisma.StageUpdateManyMutationInput,
  "errorMessage" | "startedAt" | "completedAt" | "actionsExecuted"
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
  // A chat turn that ends forgets its user's token (same client, so same transaction).
  if (count === 1 && TERMINAL_EXECUTION_STATUSES.includes(to)) {
    await wipeChatStageUserToken(client, id);
  }
  return count === 1;
}

export function getStage(client: DbClient, id: string): Promise<Stage | null> {
  return client.stage.findUnique({ where: { id } });
}

/** The stage when it belongs to `sessionId`, else null. */
export function getSessionStage(
  client: DbClient,
  sessionId: string,
  stageId: string,
): Promise<Stage | null> {
  return client.stage.findFirst({ where: { id: stageId, sessionId } });
}

/** One stage with its executions in agent order, or null. */
export function getStageWithExecutions(
  client: DbClient,
  id: string,
): Promise<(Stage & { executions: AgentExecution[] }) | null> {
  return client.stage.findUnique({
    where: { id },
    include: { executions: { orderBy: [{ agentIndex: "asc" }, { createdAt: "asc" }] } },
  });
}

/** The session's stages in order, each with its executions. */
export function listSessionStages(
  client: DbClient,
  sessionId: string,
): Promise<(Stage & { executions: AgentExecution[] })[]> {
  return client.stage.findMany({
    where: { sessionId },
    orderBy: { stageIndex: "asc" },
    include: { executions: { orderBy: [{ agentIndex: "asc" }, { createdAt: "asc" }] } },
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
