import { z } from "zod";
import {
  ReviewStateShape,
  ReviewStatusSchema,
  ScoringStatusSchema,
  TriageGroupSchema,
} from "./api-review.ts";
import { IdSchema, TimestampSchema, TokenUsageSchema } from "./common.ts";
import {
  ExecutionKindSchema,
  ExecutionStatusSchema,
  ForcedConclusionReasonSchema,
  LLMInteractionTypeSchema,
  MCPInteractionTypeSchema,
  MessageRoleSchema,
  ParallelTypeSchema,
  SessionStatusSchema,
  StageKindSchema,
  SuccessPolicySchema,
  TimelineEventStatusSchema,
  TimelineEventTypeSchema,
} from "./enums.ts";
import { LabelTokenSchema, SessionLabelsSchema } from "./labels.ts";

/** The HTTP API of ingest-api, part 2: sessions, timeline, chat and trace. */

// --- sessions ---

export const SessionSortFieldSchema = z.enum([
  "created_at",
  "started_at",
  "completed_at",
  "status",
  "alert_type",
]);
export type SessionSortField = z.infer<typeof SessionSortFieldSchema>;

const csv = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .string()
    .transform((value) =>
      value
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1));

/** Unknown parameters are rejected (400 naming them), so a typo never silently lists all. */
export const SessionListQuerySchema = z
  .strictObject({
    /** Comma-separated statuses. */
    status: csv(SessionStatusSchema).optional(),
    alert_type: z.string().min(1).optional(),
    chain_id: z.string().min(1).optional(),
    /** Only this project's sessions (within those the caller may see). */
    project: z.string().min(1).optional(),
    /** Comma-separated review states. */
    review_status: csv(ReviewStatusSchema).optional(),
    /** Exact assignee. */
    assignee: z.string().min(1).optional(),
    /** Sessions whose labels hold this exact (canonical) name. */
    label: LabelTokenSchema.optional(),
    /** Case-insensitive text over alert data, final analysis and executive summary (≥ 3 chars). */
    search: z.string().trim().min(3).max(500).optional(),
    /** Created at or after. */
    from: TimestampSchema.optional(),
    /** Created at or before. */
    to: TimestampSchema.optional(),
    sort_by: SessionSortFieldSchema.default("created_at"),
    sort_order: z.enum(["asc", "desc"]).default("desc"),
    page: z.coerce.number().int().positive().default(1),
    page_size: z.coerce.number().int().positive().max(1000).default(25),
  })
  .refine((q) => !(q.from && q.to && q.from > q.to), {
    message: "from must not be after to",
    path: ["from"],
  });
export type SessionListQuery = z.infer<typeof SessionListQuerySchema>;

export const TokenTotalsSchema = TokenUsageSchema.extend({
  thinking_tokens: z.number().int().nonnegative(),
});

/** complete: every LLM interaction is priced; partial: some are; none: none is (or none exist). */
export const CostCompletenessSchema = z.enum(["complete", "partial", "none"]);
export type CostCompleteness = z.infer<typeof CostCompletenessSchema>;

/**
 * The estimated LLM cost of a set of interactions: the sum of each one's estimate, made once
 * when it was written and never repriced.
 */
export const CostTotalsSchema = z.object({
  /** USD over the priced interactions (0 when none is priced). */
  estimated_cost_usd: z.number().nonnegative(),
  cost_completeness: CostCompletenessSchema,
  /** Interactions of a model with no known rate, or written while estimation was disabled. */
  unpriced_interactions: z.number().int().nonnegative(),
});
export type CostTotals = z.infer<typeof CostTotalsSchema>;

/** How one LLM interaction was priced. */
export const CostStatusSchema = z.enum(["priced", "unpriced", "disabled"]);
export type CostStatus = z.infer<typeof CostStatusSchema>;

/**
 * Aggregates of a session, computed in SQL for a whole page at once (the Go TARSy's
 * dashboard fields). Interactions and tokens count every stored LLM and MCP interaction of
 * the session, session-level ones (executive summary) and chat answers included; the token
 * sums are over the LLM interactions (`token_usage` stays the sum over agent executions).
 * Stages are every stage row of the session, as the Go TARSy counts them: the chain's
 * investigation and synthesis stages AND each chat answer's stage.
 */
const SessionStatsShape = {
  llm_interaction_count: z.number().int().nonnegative(),
  mcp_interaction_count: z.number().int().nonnegative(),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  /** Every stage of the session, chat stages included (the Go TARSy's count). */
  total_stages: z.number().int().nonnegative(),
  completed_stages: z.number().int().nonnegative(),
  failed_stages: z.number().int().nonnegative(),
  /** Some stage runs agents in parallel (`parallel_type` set). */
  has_parallel_stages: z.boolean(),
  /** Some stage is an action stage (the dashboard's "Action" badge). */
  has_action_stages: z.boolean(),
  /** Follow-up questions asked in the session's chat. */
  chat_message_count: z.number().int().nonnegative(),
};

/** The longest cancel reason, in characters (Unicode code points, as the dashboard counts). */
export const MAX_CANCEL_REASON_CHARS = 500;

/** Who stopped a session and why (ADR-0032): the cancel's own record, never an error. */
export const CancelAttributionShape = {
  /**
   * Who cancelled the session: the caller's identity, `api-client` without one, or `system`
   * when TARSy stopped it itself (its time limit ran out, or its agents were cancelled with
   * no one asking). Null while nobody stopped it, and on sessions from before it was kept.
   */
  cancelled_by: z.string().nullable(),
  /** Why, as the canceller said (trimmed), or what stopped it for `system`; else null. */
  cancel_reason: z.string().nullable(),
};

/** What TARSy writes as the canceller when it stops a session itself. */
export const SYSTEM_CANCEL_ACTOR = "system";

/** A cancel reason as stored: trimmed, and a blank one is no reason (null). */
export function normalizeCancelReason(reason: string | null | undefined): string | null {
  const trimmed = reason?.trim() ?? "";
  return trimmed === "" ? null : trimmed;
}

/**
 * The one line that says who cancelled and why: `Cancelled by alice: duplicate of INC-123`,
 * `Cancelled by alice` without a reason, or null when nobody is recorded (older sessions).
 */
export function describeCancel(s: {
  cancelled_by: string | null;
  cancel_reason: string | null;
}): string | null {
  if (!s.cancelled_by) return null;
  return s.cancel_reason
    ? `Cancelled by ${s.cancelled_by}: ${s.cancel_reason}`
    : `Cancelled by ${s.cancelled_by}`;
}

export const SessionSummarySchema = z.object({
  id: IdSchema,
  alert_type: z.string(),
  chain_id: z.string(),
  /** The project the session belongs to. */
  project: z.string(),
  status: SessionStatusSchema,
  author: z.string().nullable(),
  runbook_url: z.string().nullable(),
  current_stage_index: z.number().int().nullable(),
  current_stage_name: z.string().nullable(),
  has_final_analysis: z.boolean(),
  error_message: z.string().nullable(),
  ...CancelAttributionShape,
  token_usage: TokenTotalsSchema,
  alert_fingerprint: z.string().nullable(),
  alert_resolved_at: TimestampSchema.nullable(),
  created_at: TimestampSchema,
  started_at: TimestampSchema.nullable(),
  completed_at: TimestampSchema.nullable(),
  duration_ms: z.number().int().nonnegative().nullable(),
  ...SessionStatsShape,
  /** Every LLM interaction of the session, chat answers and executive summary included. */
  cost: CostTotalsSchema,
  /** Session labels from the executive summary: null while unlabelled, `[]` when none applied. */
  labels: SessionLabelsSchema,
  /** The latest completed score (0–100), or null. */
  latest_score: z.number().int().nullable(),
  /** Where the latest scoring run stands, or null when none ran. */
  scoring_status: ScoringStatusSchema.nullable(),
  ...ReviewStateShape,
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** One triage bucket, a page of it (most recently ended first; investigating: newest first). */
export const TriageGroupResponseSchema = z.object({
  group: TriageGroupSchema,
  count: z.number().int().nonnegative(),
  page: z.number().int().positive(),
  page_size: z.number().int().positive(),
  total_pages: z.number().int().nonnegative(),
  sessions: z.array(SessionSummarySchema),
});
export type TriageGroupResponse = z.infer<typeof TriageGroupResponseSchema>;

export const SessionListResponseSchema = z.object({
  sessions: z.array(SessionSummarySchema),
  pagination: z.object({
    page: z.number().int().positive(),
    page_size: z.number().int().positive(),
    total: z.number().int().nonnegative(),
    total_pages: z.number().int().nonnegative(),
  }),
});
export type SessionListResponse = z.infer<typeof SessionListResponseSchema>;

export const ActiveSessionsResponseSchema = z.object({
  active: z.array(SessionSummarySchema),
  queued: z.array(SessionSummarySchema),
});
export type ActiveSessionsResponse = z.infer<typeof ActiveSessionsResponseSchema>;

/** `GET /api/v1/sessions/:id/summary`: the Go TARSy's `SessionSummaryResponse`. */
export const SessionStatisticsSchema = z.object({
  session_id: IdSchema,
  /** `llm_interactions + mcp_interactions`. */
  total_interactions: z.number().int().nonnegative(),
  llm_interactions: z.number().int().nonnegative(),
  mcp_interactions: z.number().int().nonnegative(),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  /** `completed_at - started_at`; null until the session has ended. */
  total_duration_ms: z.number().int().nonnegative().nullable(),
  /** USD over the session's priced LLM interactions (as `cost` on the list and detail). */
  estimated_cost_usd: z.number().nonnegative(),
  cost_completeness: CostCompletenessSchema,
  chain_statistics: z.object({
    /** Every stage of the session, chat stages included (as on the list). */
    total_stages: z.number().int().nonnegative(),
    completed_stages: z.number().int().nonnegative(),
    failed_stages: z.number().int().nonnegative(),
    current_stage_index: z.number().int().nullable(),
  }),
  /** The latest completed score (0–100), or null. */
  total_score: z.number().int().nullable(),
  /** Where the latest scoring run stands, or null when none ran. */
  scoring_status: ScoringStatusSchema.nullable(),
});
export type SessionStatistics = z.infer<typeof SessionStatisticsSchema>;

/** `GET /api/v1/sessions/:id/status`: the light polling surface (with an ETag). */
export const SessionStatusResponseSchema = z.object({
  id: IdSchema,
  status: SessionStatusSchema,
  final_analysis: z.string().nullable(),
  executive_summary: z.string().nullable(),
  /** Null while in progress or unlabelled; `[]` when the summary applied none. */
  labels: SessionLabelsSchema,
  error_message: z.string().nullable(),
  ...CancelAttributionShape,
});
export type SessionStatusResponse = z.infer<typeof SessionStatusResponseSchema>;

export const ExecutionDetailSchema = z.object({
  id: IdSchema,
  agent_name: z.string(),
  agent_index: z.number().int(),
  kind: ExecutionKindSchema,
  status: ExecutionStatusSchema,
  llm_backend: z.string().nullable(),
  llm_provider: z.string().nullable(),
  /** What the execution started with, when a provider fallback replaced it (else null). */
  original_llm_provider: z.string().nullable(),
  original_llm_backend: z.string().nullable(),
  /** The reasoning effort sent to the provider in use (null: the provider's default). */
  reasoning_effort: z.string().nullable(),
  /** After a provider fallback: the effort the execution started with (else null). */
  original_reasoning_effort: z.string().nullable(),
  error_message: z.string().nullable(),
  /**
   * Why the agent was made to conclude: `max_iterations` or `time_budget` (its wrap-up before
   * the deadline); null when it concluded by itself.
   */
  forced_conclusion: ForcedConclusionReasonSchema.nullable(),
  token_usage: TokenTotalsSchema,
  cost: CostTotalsSchema,
  started_at: TimestampSchema.nullable(),
  completed_at: TimestampSchema.nullable(),
  /** Sub-agents: the execution that dispatched this one (null for the stage's own agents). */
  parent_execution_id: IdSchema.nullable(),
  /** Sub-agents: the task their parent gave them. */
  task: z.string().nullable(),
});

export const StageDetailSchema = z.object({
  id: IdSchema,
  stage_name: z.string(),
  stage_index: z.number().int(),
  kind: StageKindSchema,
  status: ExecutionStatusSchema,
  parallel_type: ParallelTypeSchema.nullable(),
  success_policy: SuccessPolicySchema.nullable(),
  expected_agent_count: z.number().int(),
  chat_id: IdSchema.nullable(),
  chat_user_message_id: IdSchema.nullable(),
  error_message: z.string().nullable(),
  /** Action stages: whether the agents acted (their YES/NO line); null for other stages. */
  actions_executed: z.boolean().nullable(),
  /** Sums over the stage's executions. */
  token_usage: TokenTotalsSchema,
  /** Every LLM interaction of the stage (its executions' and the stage's own). */
  cost: CostTotalsSchema,
  started_at: TimestampSchema.nullable(),
  completed_at: TimestampSchema.nullable(),
  executions: z.array(ExecutionDetailSchema),
});

export const ChatDetailSchema = z.object({
  id: IdSchema,
  created_by: z.string(),
  created_at: TimestampSchema,
  messages: z.array(
    z.object({
      id: IdSchema,
      content: z.string(),
      author: z.string(),
      created_at: TimestampSchema,
      stage_id: IdSchema.nullable(),
    }),
  ),
});

/** The runbook the session's agents used; null until its first execution resolved it. */
export const SessionRunbookSchema = z.object({
  /** fetched: from `runbook_url`; default: `defaults.runbook`; none: no runbook text. */
  source: z.enum(["fetched", "default", "none"]),
  /** The text as the prompts carry it (masked); null when there is none. */
  content: z.string().nullable(),
  /** Why the session fell back from `runbook_url`, else null. */
  error: z.string().nullable(),
  resolved_at: TimestampSchema,
});
export type SessionRunbook = z.infer<typeof SessionRunbookSchema>;

export const SessionDetailSchema = SessionSummarySchema.extend({
  alert_data: z.string(),
  runbook: SessionRunbookSchema.nullable(),
  mcp_selection: z.unknown().nullable(),
  /** What threads the session's Slack notifications (masked), as submitted. */
  slack_message_fingerprint: z.string().nullable(),
  final_analysis: z.string().nullable(),
  executive_summary: z.string().nullable(),
  executive_summary_error: z.string().nullable(),
  chat_enabled: z.boolean(),
  stages: z.array(StageDetailSchema),
  chat: ChatDetailSchema.nullable(),
});
export type SessionDetail = z.infer<typeof SessionDetailSchema>;

export const TimelineEventResponseSchema = z.object({
  id: IdSchema,
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  sequence_number: z.number().int(),
  event_type: TimelineEventTypeSchema,
  status: TimelineEventStatusSchema,
  content: z.string(),
  metadata: z.unknown().nullable(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
});
export const TimelineResponseSchema = z.object({
  session_id: IdSchema,
  events: z.array(TimelineEventResponseSchema),
});
export type TimelineResponse = z.infer<typeof TimelineResponseSchema>;

/**
 * `POST /api/v1/sessions/:id/cancel`: the body is optional (none, `{}`, or a blank reason
 * cancel without one). The canceller is the caller's identity, never a body field.
 */
export const CancelRequestSchema = z
  .object({
    /** Why (at most 500 characters after trimming); shown with the canceller. */
    reason: z
      .string()
      .refine((r) => Array.from(r.trim()).length <= MAX_CANCEL_REASON_CHARS, {
        message: `must be at most ${MAX_CANCEL_REASON_CHARS} characters`,
      })
      .optional(),
  })
  .strict();
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

export const CancelResponseSchema = z.object({
  session_id: IdSchema,
  status: z.literal("cancel_requested"),
});
export type CancelResponse = z.infer<typeof CancelResponseSchema>;

/** `DELETE /api/v1/sessions/:id` (soft delete; 409 `session_active` while it runs). */
export const SessionDeleteResponseSchema = z.object({
  session_id: IdSchema,
  deleted_at: TimestampSchema,
});
export type SessionDeleteResponse = z.infer<typeof SessionDeleteResponseSchema>;

export const ChatMessageRequestSchema = z.object({
  content: z.string().trim().min(1).max(100_000),
});
export type ChatMessageRequest = z.infer<typeof ChatMessageRequestSchema>;

export const ChatMessageResponseSchema = z.object({
  chat_id: IdSchema,
  message_id: IdSchema,
  /** The stage that will answer: the orchestrator creates it with this id. */
  stage_id: IdSchema,
});
export type ChatMessageResponse = z.infer<typeof ChatMessageResponseSchema>;

// --- trace ---

export const LLMInteractionListItemSchema = z.object({
  id: IdSchema,
  interaction_type: LLMInteractionTypeSchema,
  model_name: z.string(),
  provider: z.string().nullable(),
  iteration: z.number().int().nullable(),
  input_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  thinking_tokens: z.number().int().nullable(),
  total_tokens: z.number().int().nullable(),
  /** Prompt tokens read from / written to the provider's prompt cache (input is uncached). */
  cache_read_tokens: z.number().int().nullable(),
  cache_creation_tokens: z.number().int().nullable(),
  /** The reasoning effort sent with the call (null: the provider's default). */
  reasoning_effort: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  error_message: z.string().nullable(),
  /** USD; null unless `cost_status` is priced. */
  estimated_cost_usd: z.number().nonnegative().nullable(),
  /** null on interactions written before cost estimation existed. */
  cost_status: CostStatusSchema.nullable(),
  created_at: TimestampSchema,
});
export const MCPInteractionListItemSchema = z.object({
  id: IdSchema,
  interaction_type: MCPInteractionTypeSchema,
  server_name: z.string(),
  tool_name: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  error_message: z.string().nullable(),
  created_at: TimestampSchema,
});
export const TraceListResponseSchema = z.object({
  stages: z.array(
    z.object({
      stage_id: IdSchema,
      stage_name: z.string(),
      executions: z.array(
        z.object({
          execution_id: IdSchema,
          agent_name: z.string(),
          /** Sub-agents: the execution that dispatched this one. */
          parent_execution_id: IdSchema.nullable(),
          llm_interactions: z.array(LLMInteractionListItemSchema),
          mcp_interactions: z.array(MCPInteractionListItemSchema),
        }),
      ),
    }),
  ),
  session_interactions: z.array(LLMInteractionListItemSchema),
});
export type TraceListResponse = z.infer<typeof TraceListResponseSchema>;

export const ConversationMessageResponseSchema = z.object({
  role: MessageRoleSchema,
  content: z.string(),
  tool_calls: z.unknown().nullable(),
  tool_call_id: z.string().nullable(),
  tool_name: z.string().nullable(),
});
export const LLMInteractionDetailSchema = LLMInteractionListItemSchema.extend({
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  thinking_content: z.string().nullable(),
  response_text: z.string().nullable(),
  tool_calls: z.unknown().nullable(),
  response_metadata: z.unknown().nullable(),
  llm_request: z.unknown().nullable(),
  conversation: z.array(ConversationMessageResponseSchema),
});
export type LLMInteractionDetail = z.infer<typeof LLMInteractionDetailSchema>;
export const MCPInteractionDetailSchema = MCPInteractionListItemSchema.extend({
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  tool_arguments: z.unknown().nullable(),
  tool_result: z.unknown().nullable(),
  available_tools: z.unknown().nullable(),
});
export type MCPInteractionDetail = z.infer<typeof MCPInteractionDetailSchema>;
