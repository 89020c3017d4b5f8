import { type ForcedConclusionReason, ForcedConclusionReasonSchema } from "@tarsy/contracts";
import type { CostEstimator } from "@tarsy/cost";
import {
  type AgentExecution,
  abandonActionRequests,
  abandonSubAgents,
  appendMessagesDelivering,
  applyFeedbackReflection,
  cancelSubAgents,
  claimSessionRunbook,
  completeTimelineEvent,
  createMemories,
  createTimelineEvent,
  type Db,
  deprecateMemories,
  discardInterruptedAttempt,
  dispatchSubAgent,
  endInterruptedEvents,
  ensureMemoryVectorIndexes,
  executionLlmUsage,
  findActionOfCall,
  finishExecutionAttempt,
  getAction,
  getExecution,
  getSession,
  getStage,
  heartbeatExecution,
  isRowId,
  labelsColumn,
  listMessages,
  listSubAgents,
  listUndeliveredSubAgentResults,
  type Message,
  markActionOutcomeUnknown,
  type OutboxEntry,
  type OutboxPublisher,
  type Prisma,
  publishOutboxNow,
  recordExecutionFallback,
  recordExecutionReasoningEffort,
  recordInjectedMemories,
  recordLLMInteraction,
  recordMCPInteraction,
  recordScoreResult,
  reinforceMemories,
  requestAction,
  searchMemories,
  searchPastSessions,
  sessionMemories,
  startExecution,
  storedLabels,
  suspendExecution,
  suspendForAction,
  type TimelineEvent,
  wakeSuspendedParent,
} from "@tarsy/db";
import type { ReasoningContinuity } from "@tarsy/llm-client";
import type {
  ExecutionRecord,
  RunnerStore,
  StoredMessage,
  StoredToolCall,
  SubAgentRecord,
  TimelineEventRecord,
} from "./ports.ts";
import { planResume } from "./resume.ts";

type Json = Prisma.InputJsonValue;

function toStoredMessage(m: Message): StoredMessage {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    toolCalls: (m.toolCalls ?? null) as StoredToolCall[] | null,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    continuity: (m.continuity ?? null) as ReasoningContinuity | null,
  };
}

function toRecord(row: TimelineEvent): TimelineEventRecord {
  return {
    id: row.id,
    sessionId: row.sessionId,
    stageId: row.stageId,
    executionId: row.executionId,
    sequenceNumber: row.sequenceNumber,
    eventType: row.eventType,
    status: row.status,
    content: row.content,
    metadata: (row.metadata ?? null) as Record<string, unknown> | null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function toSubAgent(row: AgentExecution): SubAgentRecord {
  return {
    id: row.id,
    sessionId: row.sessionId,
    stageId: row.stageId,
    agentName: row.agentName,
    agentIndex: row.agentIndex,
    kind: row.kind,
    status: row.status,
    task: row.task,
    finalAnalysis: row.finalAnalysis,
    errorMessage: row.errorMessage,
    forcedConclusion: forcedConclusionOf(row.forcedConclusion),
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}

/**
 * The runner's persistence on Postgres, through packages/db. Each LLM interaction is priced
 * by `costs` as it is written, at the time of writing, and never again.
 */
export function createPostgresStore(
  db: Db,
  costs: CostEstimator,
  /** Publishes the outbox messages of the runner's own transactions at once (else the relay). */
  publish?: OutboxPublisher,
): RunnerStore {
  const { prisma } = db;
  const deliver = async (entries: readonly OutboxEntry[]) => {
    if (!publish || entries.length === 0) return;
    // The orchestrator's relay publishes whatever this leaves behind.
    await publishOutboxNow(
      prisma,
      publish,
      entries.map((e) => e.msgId),
    ).catch(() => undefined);
  };
  return {
    async createTimelineEvent(event) {
      const row = await createTimelineEvent(prisma, {
        sessionId: event.sessionId,
        stageId: event.stageId,
        executionId: event.executionId,
        eventType: event.eventType,
        status: event.status,
        content: event.content,
        metadata: (event.metadata ?? null) as Prisma.InputJsonObject | null,
      });
      return toRecord(row);
    },

    async completeTimelineEvent(id, update) {
      const row = await completeTimelineEvent(prisma, id, {
        content: update.content,
        status: update.status,
        // A streamed answer that turned out to be final is retyped (llm_response → final_analysis).
        ...(update.eventType && { eventType: update.eventType }),
        ...(update.metadata && { metadata: update.metadata as Prisma.InputJsonObject }),
      });
      return row ? toRecord(row) : null;
    },

    async appendMessages(messages, deliveredSubAgentIds = []) {
      const first = messages[0];
      if (!first) return [];
      const rows = await appendMessagesDelivering(
        prisma,
        { sessionId: first.sessionId, stageId: first.stageId, executionId: first.executionId },
        messages.map((m) => ({
          role: m.role,
          content: m.content,
          toolCalls: m.toolCalls ?? null,
          toolCallId: m.toolCallId ?? null,
          toolName: m.toolName ?? null,
          continuity: (m.continuity ?? null) as Json | null,
        })),
        deliveredSubAgentIds,
      );
      return rows.map((r) => r.id);
    },

    async recordProviderFallback(executionId, change) {
      await recordExecutionFallback(prisma, executionId, change);
    },

    async recordReasoningEffort(executionId, reasoningEffort) {
      await recordExecutionReasoningEffort(prisma, executionId, reasoningEffort);
    },

    async recordLlmInteraction(i) {
      const cost = costs.estimate(i.modelName, i.usage, new Date());
      await recordLLMInteraction(prisma, {
        sessionId: i.sessionId,
        stageId: i.stageId,
        executionId: i.executionId,
        interactionType: i.interactionType,
        modelName: i.modelName,
        provider: i.provider,
        iteration: i.iteration,
        lastMessageId: i.lastMessageId,
        llmRequest: i.llmRequest as Json,
        responseText: i.responseText,
        thinkingContent: i.thinkingContent,
        toolCalls: (i.toolCalls ?? null) as Json | null,
        responseMetadata: (i.responseMetadata ?? null) as Json | null,
        inputTokens: i.usage?.input_tokens ?? null,
        outputTokens: i.usage?.output_tokens ?? null,
        thinkingTokens: i.usage?.thinking_tokens ?? null,
        totalTokens: i.usage?.total_tokens ?? null,
        cacheReadTokens: i.usage?.cache_read_tokens ?? null,
        cacheCreationTokens: i.usage?.cache_creation_tokens ?? null,
        reasoningEffort: i.reasoningEffort,
        durationMs: i.durationMs,
        errorMessage: i.errorMessage,
        ...cost,
      });
    },

    async recordMcpInteraction(i) {
      await recordMCPInteraction(prisma, {
        sessionId: i.sessionId,
        stageId: i.stageId,
        executionId: i.executionId,
        interactionType: i.interactionType,
        serverName: i.serverName,
        toolName: i.toolName,
        toolArguments: (i.toolArguments ?? null) as Json | null,
        toolResult: (i.toolResult ?? null) as Json | null,
        availableTools: (i.availableTools ?? null) as Json | null,
        durationMs: i.durationMs,
        errorMessage: i.errorMessage,
      });
    },

    async loadExecution(executionId): Promise<ExecutionRecord | null> {
      if (!isRowId(executionId)) return null;
      const execution = await getExecution(prisma, executionId);
      if (!execution) return null;
      const [session, stage, parent] = await Promise.all([
        getSession(prisma, execution.sessionId),
        execution.stageId ? getStage(prisma, execution.stageId) : Promise.resolve(null),
        execution.parentExecutionId
          ? getExecution(prisma, execution.parentExecutionId)
          : Promise.resolve(null),
      ]);
      if (!session) return null;
      return {
        id: execution.id,
        sessionId: execution.sessionId,
        stageId: execution.stageId,
        kind: execution.kind,
        agentName: execution.agentName,
        agentIndex: execution.agentIndex,
        status: execution.status,
        attempt: execution.attempt,
        suspended: execution.suspendedAt !== null,
        parked: execution.resumeRequest !== null,
        finalAnalysis: execution.finalAnalysis,
        actionsExecuted: execution.actionsExecuted,
        forcedConclusion: forcedConclusionOf(execution.forcedConclusion),
        labels: storedLabels(execution.labels),
        errorMessage: execution.errorMessage,
        usage: {
          input_tokens: execution.inputTokens,
          output_tokens: execution.outputTokens,
          thinking_tokens: execution.thinkingTokens,
          total_tokens: execution.totalTokens,
        },
        createdAt: execution.createdAt,
        completedAt: execution.completedAt,
        session: {
          alertData: session.alertData,
          alertType: session.alertType,
          chainId: session.chainId,
          project: session.project,
          runbookUrl: session.runbookUrl,
          runbook: session.runbookSource
            ? {
                content: session.runbookContent,
                source: session.runbookSource,
                error: session.runbookError,
              }
            : null,
          mcpSelection: session.mcpSelection,
        },
        stage: stage ? { name: stage.stageName, index: stage.stageIndex } : null,
        task: execution.task,
        parent: parent ? { id: parent.id, kind: parent.kind, agentIndex: parent.agentIndex } : null,
      };
    },

    async claimSessionRunbook(sessionId, runbook) {
      const result = await claimSessionRunbook(prisma, sessionId, runbook);
      const { content, source, error } = result.runbook;
      return { runbook: { content, source, error }, claimed: result.claimed };
    },

    async startAttempt(executionId, runnerId, options = {}) {
      const row = await startExecution(prisma, executionId, runnerId);
      if (!row) return null;
      if (options.resume) {
        // A suspended parent woken by its sub-agents: the conversation goes on.
        const interrupted = await endInterruptedEvents(prisma, executionId, row.attempt - 1);
        const messages = await listMessages(prisma, executionId);
        return {
          attempt: row.attempt,
          interrupted: interrupted.map(toRecord),
          abandoned: [],
          conversation: messages.map(toStoredMessage),
        };
      }
      if (row.attempt <= 1) return { attempt: row.attempt, interrupted: [], abandoned: [] };
      // An earlier attempt was interrupted (a runner killed or shut down). Its conversation is
      // continued when it can be: only the step in flight runs again, and its sub-agents go on.
      let restartReason: string | undefined;
      if (options.resumeInterrupted) {
        const messages = await listMessages(prisma, executionId);
        const conversation = messages.map(toStoredMessage);
        const plan = planResume(conversation);
        if (plan.resumable) {
          const interrupted = await endInterruptedEvents(prisma, executionId, row.attempt - 1);
          const used = await executionLlmUsage(prisma, executionId);
          return {
            attempt: row.attempt,
            interrupted: interrupted.map(toRecord),
            abandoned: [],
            conversation,
            recovery: {
              mode: "resumed",
              plan,
              usage: {
                input_tokens: used.input,
                output_tokens: used.output,
                thinking_tokens: used.thinking,
                total_tokens: used.total,
              },
            },
          };
        }
        restartReason = plan.reason;
      }
      // Otherwise the loop starts from scratch: the sub-agents the earlier attempt had
      // dispatched are ended (the new attempt dispatches its own), and so are the action
      // requests it left pending (the new attempt asks again).
      const interrupted = await discardInterruptedAttempt(prisma, executionId, row.attempt - 1);
      const abandoned = await abandonSubAgents(prisma, executionId);
      await deliver(await abandonActionRequests(prisma, executionId, new Date()));
      return {
        attempt: row.attempt,
        interrupted: interrupted.map(toRecord),
        abandoned: abandoned.map(toSubAgent),
        ...(restartReason !== undefined && {
          recovery: { mode: "restarted" as const, reason: restartReason },
        }),
      };
    },

    subAgents: {
      async dispatch(input) {
        const result = await dispatchSubAgent(prisma, input);
        if (result.status === "refused") return { status: "refused", reason: result.reason };
        return { status: result.status, subAgent: toSubAgent(result.execution) };
      },
      list: async (parentId) => (await listSubAgents(prisma, parentId)).map(toSubAgent),
      undelivered: async (parentId) =>
        (await listUndeliveredSubAgentResults(prisma, parentId)).map(toSubAgent),
      cancel: async (parentId, reason, only) =>
        (await cancelSubAgents(prisma, parentId, reason, only)).map(toSubAgent),
      suspend: (executionId, attempt, resumeRequest, usage) =>
        suspendExecution(
          prisma,
          executionId,
          attempt,
          resumeRequest as Json as Prisma.InputJsonObject,
          usage,
        ),
      wake: async (executionId) => (await wakeSuspendedParent(prisma, executionId)) !== null,
    },

    actions: {
      async request(input) {
        const requested = await requestAction(prisma, { ...input, at: new Date() });
        await deliver(requested.events);
        return { action: requested.action, created: requested.created };
      },
      find: (executionId, toolCallId, id) =>
        id === undefined
          ? findActionOfCall(prisma, executionId, toolCallId)
          : getAction(prisma, id),
      suspend: (input) =>
        suspendForAction(prisma, {
          ...input,
          resumeRequest: input.resumeRequest as Json as Prisma.InputJsonObject,
        }),
      async markOutcomeUnknown(id, actor, reason) {
        const marked = await markActionOutcomeUnknown(prisma, {
          id,
          actor,
          reason,
          at: new Date(),
        });
        if (!marked) return null;
        await deliver(marked.events);
        return marked.action;
      },
    },

    heartbeat: (executionId, attempt) => heartbeatExecution(prisma, executionId, attempt),

    async recordScoreResult(stageId, result) {
      await recordScoreResult(prisma, stageId, result);
    },

    memories: {
      search: (search) => searchMemories(prisma, search),
      recordInjected: (sessionId, ids) => recordInjectedMemories(prisma, sessionId, ids),
      create: (scope, memories) => createMemories(prisma, scope, memories),
      reinforce: (project, ids) => reinforceMemories(prisma, project, ids),
      deprecate: (project, ids) => deprecateMemories(prisma, project, ids),
      searchPastSessions: (search) => searchPastSessions(prisma, search),
      ofSession: (sessionId) => sessionMemories(prisma, sessionId),
      applyFeedback: (reflectionId, scope, changes) =>
        applyFeedbackReflection(prisma, reflectionId, scope, changes),
      indexVectors: () => ensureMemoryVectorIndexes(prisma),
    },

    finishExecution: (executionId, attempt, outcome) =>
      finishExecutionAttempt(prisma, executionId, attempt, outcome.status, {
        finalAnalysis: outcome.finalAnalysis,
        ...(outcome.actionsExecuted !== undefined && { actionsExecuted: outcome.actionsExecuted }),
        ...(outcome.labels !== undefined && { labels: labelsColumn(outcome.labels) }),
        ...(outcome.forcedConclusion && { forcedConclusion: outcome.forcedConclusion }),
        errorMessage: outcome.error,
        completedAt: new Date(),
        inputTokens: outcome.usage.input_tokens,
        outputTokens: outcome.usage.output_tokens,
        thinkingTokens: outcome.usage.thinking_tokens ?? 0,
        totalTokens: outcome.usage.total_tokens,
      }),
  };
}

/** The stored reason of a forced conclusion (null: none, or a value this version does not know). */
function forcedConclusionOf(stored: string | null): ForcedConclusionReason | null {
  const parsed = ForcedConclusionReasonSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}
