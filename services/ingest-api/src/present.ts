import {
  type CostTotals,
  ForcedConclusionReasonSchema,
  type NotificationDelivery,
  NotificationEventSchema,
  type ReviewState,
  type SessionDetail,
  type SessionScore,
  type SessionStatistics,
  type SessionStatusResponse,
  type SessionSummary,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import type {
  AgentExecution,
  AlertSession,
  Chat,
  ChatUserMessage,
  CostSums,
  LLMInteraction,
  MCPInteraction,
  NotificationDelivery as NotificationDeliveryRow,
  SessionCostBreakdown,
  SessionScore as SessionScoreRow,
  SessionStats,
  SessionTrace,
  Stage,
  TimelineEvent,
} from "@tarsy/db";
import { NO_COST, storedLabels } from "@tarsy/db";

/** Rows → API bodies (snake_case, ISO timestamps). */

export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** USD sums keep 10 decimals: far below a cent, free of floating-point noise. */
const roundUsd = (usd: number): number => Math.round(usd * 1e10) / 1e10;

/** complete: every LLM interaction priced (at least one); partial: some; none: none. */
export function presentCost(sums: CostSums | undefined): CostTotals {
  const { interactions, priced, usd } = sums ?? NO_COST;
  return {
    estimated_cost_usd: roundUsd(usd),
    cost_completeness: priced === 0 ? "none" : priced === interactions ? "complete" : "partial",
    unpriced_interactions: interactions - priced,
  };
}

const durationOf = (s: AlertSession): number | null =>
  s.startedAt && s.completedAt
    ? Math.max(0, s.completedAt.getTime() - s.startedAt.getTime())
    : null;

export function presentSummary(s: AlertSession, stats: SessionStats): SessionSummary {
  return {
    id: s.id,
    alert_type: s.alertType,
    chain_id: s.chainId,
    project: s.project,
    status: s.status,
    author: s.author,
    runbook_url: s.runbookUrl,
    current_stage_index: s.currentStageIndex,
    current_stage_name: s.currentStageName,
    has_final_analysis: s.finalAnalysis !== null && s.finalAnalysis !== "",
    labels: storedLabels(s.labels),
    error_message: s.errorMessage,
    cancelled_by: s.cancelledBy,
    cancel_reason: s.cancelReason,
    token_usage: {
      input_tokens: s.inputTokens,
      output_tokens: s.outputTokens,
      thinking_tokens: s.thinkingTokens,
      total_tokens: s.totalTokens,
    },
    alert_fingerprint: s.alertFingerprint,
    alert_resolved_at: iso(s.alertResolvedAt),
    created_at: s.createdAt.toISOString(),
    started_at: iso(s.startedAt),
    completed_at: iso(s.completedAt),
    duration_ms: durationOf(s),
    llm_interaction_count: stats.llmInteractionCount,
    mcp_interaction_count: stats.mcpInteractionCount,
    input_tokens: stats.inputTokens,
    output_tokens: stats.outputTokens,
    total_tokens: stats.totalTokens,
    total_stages: stats.totalStages,
    completed_stages: stats.completedStages,
    failed_stages: stats.failedStages,
    has_parallel_stages: stats.hasParallelStages,
    has_action_stages: stats.hasActionStages,
    chat_message_count: stats.chatMessageCount,
    cost: presentCost(stats.cost),
    latest_score: stats.latestScore,
    scoring_status: stats.scoringStatus,
    ...presentReviewState(s),
  };
}

/** The review fields of a session (list, detail, triage and the `review.status` event). */
export function presentReviewState(s: AlertSession): ReviewState {
  return {
    review_status: s.reviewStatus,
    assignee: s.assignee,
    assigned_at: iso(s.assignedAt),
    reviewed_at: iso(s.reviewedAt),
    quality_rating: s.qualityRating,
    action_taken: s.actionTaken,
    investigation_feedback: s.investigationFeedback,
  };
}

/** `GET /sessions/:id/summary` (the Go TARSy's shape). */
export function presentStatistics(s: AlertSession, stats: SessionStats): SessionStatistics {
  const cost = presentCost(stats.cost);
  return {
    session_id: s.id,
    total_interactions: stats.llmInteractionCount + stats.mcpInteractionCount,
    llm_interactions: stats.llmInteractionCount,
    mcp_interactions: stats.mcpInteractionCount,
    input_tokens: stats.inputTokens,
    output_tokens: stats.outputTokens,
    total_tokens: stats.totalTokens,
    total_duration_ms: durationOf(s),
    estimated_cost_usd: cost.estimated_cost_usd,
    cost_completeness: cost.cost_completeness,
    chain_statistics: {
      total_stages: stats.totalStages,
      completed_stages: stats.completedStages,
      failed_stages: stats.failedStages,
      current_stage_index: s.currentStageIndex,
    },
    total_score: stats.latestScore,
    scoring_status: stats.scoringStatus,
  };
}

/** `GET /sessions/:id/status`. */
export function presentStatus(s: AlertSession): SessionStatusResponse {
  return {
    id: s.id,
    status: s.status,
    final_analysis: s.finalAnalysis,
    executive_summary: s.executiveSummary,
    labels: storedLabels(s.labels),
    error_message: s.errorMessage,
    cancelled_by: s.cancelledBy,
    cancel_reason: s.cancelReason,
  };
}

export type StageRow = Stage & { executions: AgentExecution[] };
export type ChatRow = Chat & { messages: (ChatUserMessage & { stage: { id: string } | null })[] };

export function presentDetail(
  s: AlertSession,
  stages: StageRow[],
  chat: ChatRow | null,
  chatEnabled: boolean,
  stats: SessionStats,
  costs: SessionCostBreakdown,
): SessionDetail {
  return {
    ...presentSummary(s, stats),
    alert_data: s.alertData,
    runbook:
      s.runbookSource && s.runbookResolvedAt
        ? {
            source: s.runbookSource,
            content: s.runbookContent,
            error: s.runbookError,
            resolved_at: s.runbookResolvedAt.toISOString(),
          }
        : null,
    mcp_selection: s.mcpSelection ?? null,
    slack_message_fingerprint: s.slackMessageFingerprint,
    final_analysis: s.finalAnalysis,
    executive_summary: s.executiveSummary,
    executive_summary_error: s.executiveSummaryError,
    chat_enabled: chatEnabled,
    stages: stages.map((stage) => ({
      id: stage.id,
      stage_name: stage.stageName,
      stage_index: stage.stageIndex,
      kind: stage.kind,
      status: stage.status,
      parallel_type: stage.parallelType,
      success_policy: stage.successPolicy,
      expected_agent_count: stage.expectedAgentCount,
      chat_id: stage.chatId,
      chat_user_message_id: stage.chatUserMessageId,
      error_message: stage.errorMessage,
      actions_executed: stage.actionsExecuted,
      token_usage: stageTokens(stage.executions),
      cost: presentCost(costs.byStage.get(stage.id)),
      started_at: iso(stage.startedAt),
      completed_at: iso(stage.completedAt),
      executions: stage.executions.map((e) => ({
        id: e.id,
        agent_name: e.agentName,
        agent_index: e.agentIndex,
        kind: e.kind,
        status: e.status,
        llm_backend: e.backend,
        llm_provider: e.llmProvider,
        original_llm_provider: e.originalLlmProvider,
        original_llm_backend: e.originalBackend,
        reasoning_effort: e.reasoningEffort,
        original_reasoning_effort: e.originalReasoningEffort,
        error_message: e.errorMessage,
        forced_conclusion: ForcedConclusionReasonSchema.safeParse(e.forcedConclusion).data ?? null,
        token_usage: {
          input_tokens: e.inputTokens,
          output_tokens: e.outputTokens,
          thinking_tokens: e.thinkingTokens,
          total_tokens: e.totalTokens,
        },
        cost: presentCost(costs.byExecution.get(e.id)),
        started_at: iso(e.startedAt),
        completed_at: iso(e.completedAt),
        parent_execution_id: e.parentExecutionId,
        task: e.task,
      })),
    })),
    chat:
      chat === null
        ? null
        : {
            id: chat.id,
            created_by: chat.createdBy,
            created_at: chat.createdAt.toISOString(),
            messages: chat.messages.map((m) => ({
              id: m.id,
              content: m.content,
              author: m.author,
              created_at: m.createdAt.toISOString(),
              stage_id: m.stage?.id ?? null,
            })),
          },
  };
}

/** A stage's tokens: the sums over its executions. */
function stageTokens(executions: readonly AgentExecution[]) {
  const sum = (pick: (e: AgentExecution) => number) =>
    executions.reduce((total, e) => total + pick(e), 0);
  return {
    input_tokens: sum((e) => e.inputTokens),
    output_tokens: sum((e) => e.outputTokens),
    thinking_tokens: sum((e) => e.thinkingTokens),
    total_tokens: sum((e) => e.totalTokens),
  };
}

export function presentTimeline(sessionId: string, events: TimelineEvent[]): TimelineResponse {
  return {
    session_id: sessionId,
    events: events.map((e) => ({
      id: e.id,
      session_id: e.sessionId,
      stage_id: e.stageId,
      execution_id: e.executionId,
      sequence_number: e.sequenceNumber,
      event_type: e.eventType,
      status: e.status,
      content: e.content,
      metadata: e.metadata ?? null,
      created_at: e.createdAt.toISOString(),
      updated_at: e.updatedAt.toISOString(),
    })),
  };
}

export function presentLlmItem(i: LLMInteraction) {
  return {
    id: i.id,
    interaction_type: i.interactionType,
    model_name: i.modelName,
    provider: i.provider,
    iteration: i.iteration,
    input_tokens: i.inputTokens,
    output_tokens: i.outputTokens,
    thinking_tokens: i.thinkingTokens,
    total_tokens: i.totalTokens,
    cache_read_tokens: i.cacheReadTokens,
    cache_creation_tokens: i.cacheCreationTokens,
    reasoning_effort: i.reasoningEffort,
    duration_ms: i.durationMs,
    error_message: i.errorMessage,
    estimated_cost_usd: i.costStatus === "priced" ? i.estimatedCostUsd : null,
    cost_status: i.costStatus,
    created_at: i.createdAt.toISOString(),
  };
}

export function presentMcpItem(i: MCPInteraction) {
  return {
    id: i.id,
    interaction_type: i.interactionType,
    server_name: i.serverName,
    tool_name: i.toolName,
    duration_ms: i.durationMs,
    error_message: i.errorMessage,
    created_at: i.createdAt.toISOString(),
  };
}

export function presentTrace(trace: SessionTrace): TraceListResponse {
  return {
    stages: trace.stages.map((stage) => ({
      stage_id: stage.stageId,
      stage_name: stage.stageName,
      executions: stage.executions.map((e) => ({
        execution_id: e.executionId,
        agent_name: e.agentName,
        parent_execution_id: e.parentExecutionId,
        llm_interactions: e.llmInteractions.map(presentLlmItem),
        mcp_interactions: e.mcpInteractions.map(presentMcpItem),
      })),
    })),
    session_interactions: trace.sessionInteractions.map(presentLlmItem),
  };
}

/** `GET /sessions/:id/score`: a scoring run. */
export function presentScore(row: SessionScoreRow): SessionScore {
  return {
    id: row.id,
    session_id: row.sessionId,
    stage_id: row.stageId,
    status: row.status,
    total_score: row.totalScore,
    score_analysis: row.scoreAnalysis,
    tool_improvement_report: row.toolImprovementReport,
    failure_tags: Array.isArray(row.failureTags)
      ? (row.failureTags as SessionScore["failure_tags"])
      : null,
    prompt_hash: row.promptHash,
    score_triggered_by: row.scoreTriggeredBy,
    error_message: row.errorMessage,
    started_at: row.startedAt.toISOString(),
    completed_at: iso(row.completedAt),
  };
}

/** `GET /sessions/:id/notifications`: one delivery. */
export function presentDelivery(row: NotificationDeliveryRow): NotificationDelivery {
  return {
    id: row.id,
    target: row.target,
    event: NotificationEventSchema.parse(row.event),
    action_id: row.subject === "" ? null : row.subject,
    status: row.status,
    attempts: row.attempts,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    sent_at: iso(row.sentAt),
  };
}
