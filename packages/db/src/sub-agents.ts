/**
 * Sub-agents: executions a parent execution dispatches with `dispatch_agent`, in the parent's
 * stage, linked by `parent_execution_id`. Their outcomes come back to the parent's conversation
 * once each (`result_delivered_at`). A parent with nothing to do but wait is suspended: no
 * runner holds it, and the first sub-agent outcome after that wakes it (`wakeSuspendedParent`).
 * Both sides lock the parent's row, so an outcome is never missed between the parent's last
 * look and its suspension.
 */
import { ACTIVE_EXECUTION_STATUSES, type ExecutionKind, type TokenUsage } from "@tarsy/contracts";
import { type DbClient, inTransaction, type Tx } from "./client.ts";
import type { AgentExecution, Prisma } from "./generated/prisma/client.ts";

async function lockExecution(tx: Tx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM agent_executions WHERE id = ${id}::uuid FOR UPDATE`;
}

export interface SubAgentDispatch {
  parentExecutionId: string;
  agentName: string;
  kind: ExecutionKind;
  task: string;
  /** The parent's tool call id: a repeated dispatch (redelivery) finds the same row. */
  dispatchKey: string;
  /** At most this many of the parent's sub-agents unfinished at once. */
  maxConcurrent: number;
  llmProvider?: string | null;
  backend?: string | null;
}

export type DispatchResult =
  | { status: "created" | "existing"; execution: AgentExecution }
  | { status: "refused"; reason: string; running: number };

/**
 * Creates a sub-agent execution (pending) in the parent's stage with the parent's agent
 * index, unless the parent already has `maxConcurrent` unfinished ones.
 */
export function dispatchSubAgent(
  client: DbClient,
  input: SubAgentDispatch,
): Promise<DispatchResult> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, input.parentExecutionId);
    const parent = await tx.agentExecution.findUniqueOrThrow({
      where: { id: input.parentExecutionId },
    });
    const existing = await tx.agentExecution.findFirst({
      where: { parentExecutionId: parent.id, dispatchKey: input.dispatchKey },
    });
    if (existing) return { status: "existing", execution: existing };
    const running = await tx.agentExecution.count({
      where: { parentExecutionId: parent.id, status: { in: [...ACTIVE_EXECUTION_STATUSES] } },
    });
    if (running >= input.maxConcurrent) {
      return {
        status: "refused",
        running,
        reason: `${running} sub-agents are already running (max_concurrent_agents ${input.maxConcurrent})`,
      };
    }
    const execution = await tx.agentExecution.create({
      data: {
        sessionId: parent.sessionId,
        stageId: parent.stageId,
        agentName: input.agentName,
        agentIndex: parent.agentIndex,
        kind: input.kind,
        parentExecutionId: parent.id,
        task: input.task,
        dispatchKey: input.dispatchKey,
        llmProvider: input.llmProvider ?? null,
        backend: input.backend ?? null,
      },
    });
    return { status: "created", execution };
  });
}

/** The parent's sub-agents in dispatch order. */
export function listSubAgents(
  client: DbClient,
  parentExecutionId: string,
): Promise<AgentExecution[]> {
  return client.agentExecution.findMany({
    where: { parentExecutionId },
    orderBy: { createdAt: "asc" },
  });
}

/** Sub-agents that ended and whose outcome the parent has not been given yet. */
export function listUndeliveredSubAgentResults(
  client: DbClient,
  parentExecutionId: string,
): Promise<AgentExecution[]> {
  return client.agentExecution.findMany({
    where: {
      parentExecutionId,
      resultDeliveredAt: null,
      status: { notIn: [...ACTIVE_EXECUTION_STATUSES] },
    },
    orderBy: [{ completedAt: "asc" }, { createdAt: "asc" }],
  });
}

/** Marks sub-agent outcomes as given to their parent (inside the transaction that stored them). */
export async function markSubAgentResultsDelivered(
  client: DbClient,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await client.agentExecution.updateMany({
    where: { id: { in: [...ids] }, resultDeliveredAt: null },
    data: { resultDeliveredAt: new Date() },
  });
}

/**
 * Ends unfinished sub-agents of a parent as `cancelled` with `reason` (a parent's
 * `cancel_agent`, its end, or its restart) and marks them delivered: the parent never waits for
 * them again. Returns the rows it ended.
 */
export function cancelSubAgents(
  client: DbClient,
  parentExecutionId: string,
  reason: string,
  only?: readonly string[],
): Promise<AgentExecution[]> {
  return inTransaction(client, async (tx) => {
    const open = await tx.agentExecution.findMany({
      where: {
        parentExecutionId,
        status: { in: [...ACTIVE_EXECUTION_STATUSES] },
        ...(only && { id: { in: [...only] } }),
      },
    });
    if (open.length === 0) return [];
    const now = new Date();
    await tx.agentExecution.updateMany({
      where: { id: { in: open.map((e) => e.id) }, status: { in: [...ACTIVE_EXECUTION_STATUSES] } },
      data: { status: "cancelled", errorMessage: reason, completedAt: now, resultDeliveredAt: now },
    });
    return tx.agentExecution.findMany({ where: { id: { in: open.map((e) => e.id) } } });
  });
}

/** A restarted parent's earlier sub-agents: ended, and never delivered to the new attempt. */
export async function abandonSubAgents(
  client: DbClient,
  parentExecutionId: string,
): Promise<AgentExecution[]> {
  return inTransaction(client, async (tx) => {
    const ended = await cancelSubAgents(
      tx,
      parentExecutionId,
      "abandoned: the parent execution restarted",
    );
    await tx.agentExecution.updateMany({
      where: { parentExecutionId, resultDeliveredAt: null },
      data: { resultDeliveredAt: new Date() },
    });
    return ended;
  });
}

export type SuspendOutcome = "suspended" | "results_ready" | "nothing_pending" | "not_owned";

/**
 * The parent waits for its sub-agents without a runner: unless an outcome is already waiting
 * for it (or nothing is pending), its row is marked suspended with the request that resumes it
 * and the tokens used so far. Only while `attempt` is still the current one.
 */
export function suspendExecution(
  client: DbClient,
  id: string,
  attempt: number,
  resumeRequest: Prisma.InputJsonObject,
  usage: TokenUsage,
): Promise<SuspendOutcome> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, id);
    const row = await tx.agentExecution.findUnique({ where: { id } });
    if (!row || row.status !== "active" || row.attempt !== attempt) return "not_owned";
    const ready = await tx.agentExecution.count({
      where: {
        parentExecutionId: id,
        resultDeliveredAt: null,
        status: { notIn: [...ACTIVE_EXECUTION_STATUSES] },
      },
    });
    if (ready > 0) return "results_ready";
    const pending = await tx.agentExecution.count({
      where: { parentExecutionId: id, status: { in: [...ACTIVE_EXECUTION_STATUSES] } },
    });
    if (pending === 0) return "nothing_pending";
    await tx.agentExecution.update({
      where: { id },
      data: {
        suspendedAt: new Date(),
        resumeRequest,
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        thinkingTokens: usage.thinking_tokens ?? 0,
        totalTokens: usage.total_tokens,
      },
    });
    return "suspended";
  });
}

/**
 * A sub-agent ended: when its parent is suspended (and still active), it is taken out of
 * suspension and the request that resumes it is returned (the caller publishes it); else null.
 */
export function wakeSuspendedParent(
  client: DbClient,
  parentExecutionId: string,
): Promise<Prisma.JsonValue | null> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, parentExecutionId);
    const parent = await tx.agentExecution.findUnique({ where: { id: parentExecutionId } });
    if (!parent || parent.status !== "active" || parent.suspendedAt === null) return null;
    await tx.agentExecution.update({
      where: { id: parentExecutionId },
      data: { suspendedAt: null },
    });
    return parent.resumeRequest;
  });
}
