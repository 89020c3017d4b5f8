/** LLMInteraction / MCPInteraction (trace layers) and the trace views built from them. */
import type { CostStatus, LLMInteractionType, MCPInteractionType } from "@tarsy/contracts";
import type { DbClient } from "./client.ts";
import { listMessages } from "./executions.ts";
import type { LLMInteraction, MCPInteraction, Message, Prisma } from "./generated/prisma/client.ts";

export interface InteractionRef {
  readonly sessionId: string;
  readonly stageId?: string | null;
  readonly executionId?: string | null;
}

export interface LLMInteractionInput extends InteractionRef {
  readonly interactionType: LLMInteractionType;
  readonly modelName: string;
  readonly provider?: string | null;
  readonly iteration?: number | null;
  /** Last conversation message sent with the call (the conversation is rebuilt from it). */
  readonly lastMessageId?: string | null;
  /** Inline request for calls that do not use the Message table (summarization, …). */
  readonly llmRequest?: Prisma.InputJsonValue | null;
  readonly responseText?: string | null;
  readonly thinkingContent?: string | null;
  readonly toolCalls?: Prisma.InputJsonValue | null;
  readonly responseMetadata?: Prisma.InputJsonValue | null;
  readonly inputTokens?: number | null;
  readonly outputTokens?: number | null;
  readonly thinkingTokens?: number | null;
  readonly totalTokens?: number | null;
  /** Prompt-cache reads and writes; inputTokens is the uncached input. */
  readonly cacheReadTokens?: number | null;
  readonly cacheCreationTokens?: number | null;
  /** The reasoning effort sent with the call. */
  readonly reasoningEffort?: string | null;
  readonly durationMs?: number | null;
  readonly errorMessage?: string | null;
  /** The estimate made now, once (never repriced): USD when priced. */
  readonly estimatedCostUsd?: number | null;
  readonly costStatus?: CostStatus | null;
  /** `catalog:<version>`, `model_rates` or `promotion:<id>`. */
  readonly costRateSource?: string | null;
}

export function recordLLMInteraction(
  client: DbClient,
  input: LLMInteractionInput,
): Promise<LLMInteraction> {
  return client.lLMInteraction.create({
    data: {
      sessionId: input.sessionId,
      stageId: input.stageId ?? null,
      executionId: input.executionId ?? null,
      interactionType: input.interactionType,
      modelName: input.modelName,
      provider: input.provider ?? null,
      iteration: input.iteration ?? null,
      lastMessageId: input.lastMessageId ?? null,
      llmRequest: input.llmRequest ?? undefined,
      responseText: input.responseText ?? null,
      thinkingContent: input.thinkingContent ?? null,
      toolCalls: input.toolCalls ?? undefined,
      responseMetadata: input.responseMetadata ?? undefined,
      inputTokens: input.inputTokens ?? null,
      outputTokens: input.outputTokens ?? null,
      thinkingTokens: input.thinkingTokens ?? null,
      totalTokens: input.totalTokens ?? null,
      cacheReadTokens: input.cacheReadTokens ?? null,
      cacheCreationTokens: input.cacheCreationTokens ?? null,
      reasoningEffort: input.reasoningEffort ?? null,
      durationMs: input.durationMs ?? null,
      errorMessage: input.errorMessage ?? null,
      estimatedCostUsd: input.estimatedCostUsd ?? null,
      costStatus: input.costStatus ?? null,
      costRateSource: input.costRateSource ?? null,
    },
  });
}

export interface MCPInteractionInput extends InteractionRef {
  readonly interactionType: MCPInteractionType;
  readonly serverName: string;
  readonly toolName?: string | null;
  readonly toolArguments?: Prisma.InputJsonValue | null;
  /** Already masked and storage-truncated. */
  readonly toolResult?: Prisma.InputJsonValue | null;
  readonly availableTools?: Prisma.InputJsonValue | null;
  readonly durationMs?: number | null;
  readonly errorMessage?: string | null;
}

export function recordMCPInteraction(
  client: DbClient,
  input: MCPInteractionInput,
): Promise<MCPInteraction> {
  return client.mCPInteraction.create({
    data: {
      sessionId: input.sessionId,
      stageId: input.stageId ?? null,
      executionId: input.executionId ?? null,
      interactionType: input.interactionType,
      serverName: input.serverName,
      toolName: input.toolName ?? null,
      toolArguments: input.toolArguments ?? undefined,
      toolResult: input.toolResult ?? undefined,
      availableTools: input.availableTools ?? undefined,
      durationMs: input.durationMs ?? null,
      errorMessage: input.errorMessage ?? null,
    },
  });
}

/** Whose interactions to list: a whole session's, or one execution's. */
export type InteractionScope = { readonly sessionId: string } | { readonly executionId: string };

/** LLM interactions of a session or an execution, oldest first. */
export function listLLMInteractions(
  client: DbClient,
  scope: InteractionScope,
): Promise<LLMInteraction[]> {
  return client.lLMInteraction.findMany({
    where: scope,
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** MCP interactions of a session or an execution, oldest first. */
export function listMCPInteractions(
  client: DbClient,
  scope: InteractionScope,
): Promise<MCPInteraction[]> {
  return client.mCPInteraction.findMany({
    where: scope,
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

export interface TraceExecution {
  readonly executionId: string;
  readonly agentName: string;
  /** Sub-agents: the execution that dispatched this one. */
  readonly parentExecutionId: string | null;
  readonly llmInteractions: LLMInteraction[];
  readonly mcpInteractions: MCPInteraction[];
}

export interface TraceStage {
  readonly stageId: string;
  readonly stageName: string;
  readonly executions: TraceExecution[];
}

export interface SessionTrace {
  readonly stages: TraceStage[];
  /** Interactions outside any stage (e.g. the executive summary). */
  readonly sessionInteractions: LLMInteraction[];
}

/** Interactions grouped stage → execution, in stage order then time order. */
export async function getSessionTrace(client: DbClient, sessionId: string): Promise<SessionTrace> {
  const [stages, llm, mcp] = await Promise.all([
    client.stage.findMany({
      where: { sessionId },
      orderBy: { stageIndex: "asc" },
      // A sub-agent has its parent's agent index and comes after it.
      include: { executions: { orderBy: [{ agentIndex: "asc" }, { createdAt: "asc" }] } },
    }),
    client.lLMInteraction.findMany({ where: { sessionId }, orderBy: { createdAt: "asc" } }),
    client.mCPInteraction.findMany({ where: { sessionId }, orderBy: { createdAt: "asc" } }),
  ]);
  return {
    stages: stages.map((stage) => ({
      stageId: stage.id,
      stageName: stage.stageName,
      executions: stage.executions.map((execution) => ({
        executionId: execution.id,
        agentName: execution.agentName,
        parentExecutionId: execution.parentExecutionId,
        llmInteractions: llm.filter((i) => i.executionId === execution.id),
        mcpInteractions: mcp.filter((i) => i.executionId === execution.id),
      })),
    })),
    sessionInteractions: llm.filter((i) => i.stageId === null),
  };
}

export interface LLMInteractionDetail {
  readonly interaction: LLMInteraction;
  /** The conversation sent with the call: messages through `lastMessageId`. */
  readonly conversation: Message[];
}

/** One LLM interaction of a session with its conversation rebuilt from the Message table. */
export async function getLLMInteractionDetail(
  client: DbClient,
  sessionId: string,
  interactionId: string,
): Promise<LLMInteractionDetail | null> {
  const interaction = await client.lLMInteraction.findFirst({
    where: { id: interactionId, sessionId },
  });
  if (interaction === null) return null;
  const conversation =
    interaction.executionId !== null && interaction.lastMessageId !== null
      ? await listMessages(client, interaction.executionId, interaction.lastMessageId)
      : [];
  return { interaction, conversation };
}

export function getMCPInteraction(
  client: DbClient,
  sessionId: string,
  interactionId: string,
): Promise<MCPInteraction | null> {
  return client.mCPInteraction.findFirst({ where: { id: interactionId, sessionId } });
}
