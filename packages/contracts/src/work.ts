import { z } from "zod";
import { QualityRatingSchema } from "./api-review.ts";
import { IdSchema, JsonObjectSchema, TimestampSchema, TokenUsageSchema, V1 } from "./common.ts";
import {
  ExecutionKindSchema,
  ExecutionStatusSchema,
  ForcedConclusionReasonSchema,
} from "./enums.ts";
import { SessionLabelsSchema } from "./labels.ts";

/** ingest-api → orchestrator: a new session row exists and waits for admission. */
export const SessionSubmittedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  alert_type: z.string().min(1),
  chain_id: z.string().min(1),
  submitted_at: TimestampSchema,
});
export type SessionSubmitted = z.infer<typeof SessionSubmittedSchema>;

/** ingest-api → orchestrator: a chat user message was stored and waits for its turn. */
export const ChatSubmittedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  chat_id: IdSchema,
  message_id: IdSchema,
  /**
   * The id of the stage that will answer, chosen at submit so the chat POST can return it
   * (absent on messages published before it was added: the stage then gets a new id).
   */
  stage_id: IdSchema.optional(),
  submitted_at: TimestampSchema,
});
export type ChatSubmitted = z.infer<typeof ChatSubmittedSchema>;

/** ingest-api → orchestrator: the user asked to cancel a session (and/or its active chat turn). */
export const CancelRequestedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  requested_by: z.string().min(1),
  /** Why, as the user said it (trimmed, at most 500 characters); absent without one. */
  reason: z.string().min(1).optional(),
  requested_at: TimestampSchema,
});
export type CancelRequested = z.infer<typeof CancelRequestedSchema>;

/**
 * orchestrator → orchestrator: a deadline for a session or a chat turn.
 * The handler naks it with a delay until `deadline_at`, then times the work out if still running.
 */
export const DeadlineSchema = z
  .object({
    v: V1,
    session_id: IdSchema,
    /**
     * `session` and `chat` end the session or the chat turn. `wrap_up`: an orchestrating agent
     * suspended while its sub-agents work reached its time budget's wrap-up; it is resumed to
     * give its forced conclusion (`execution_id`).
     */
    scope: z.enum(["session", "chat", "wrap_up"]),
    /** The chat response stage, for scope `chat`; the execution's stage for `wrap_up`. */
    stage_id: IdSchema.optional(),
    /** The suspended execution, for scope `wrap_up`. */
    execution_id: IdSchema.optional(),
    deadline_at: TimestampSchema,
  })
  .refine((d) => (d.scope === "wrap_up") === (d.execution_id !== undefined), {
    error: "execution_id is given with scope wrap_up, and only then",
    path: ["execution_id"],
  });
export type Deadline = z.infer<typeof DeadlineSchema>;

/**
 * ingest-api → orchestrator: someone asked to score a session; the score row exists
 * (`in_progress`) and waits for its stage and judge execution.
 */
export const ScoreRequestedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  score_id: IdSchema,
  requested_by: z.string().min(1),
  requested_at: TimestampSchema,
});
export type ScoreRequested = z.infer<typeof ScoreRequestedSchema>;

/**
 * ingest-api → orchestrator: a completed review carries written feedback that was not
 * reflected on yet (investigation memory). The reflection row exists (`pending`), once per
 * session and feedback text, and waits for its execution in the session's scoring stage.
 */
export const FeedbackSubmittedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  reflection_id: IdSchema,
  submitted_by: z.string().min(1),
  submitted_at: TimestampSchema,
});
export type FeedbackSubmitted = z.infer<typeof FeedbackSubmittedSchema>;

/** What the feedback reflector reads besides the investigation (kind `feedback_reflection`). */
export const ReviewFeedbackSchema = z.object({
  reflection_id: IdSchema,
  /** The reviewer's `investigation_feedback`. */
  text: z.string().min(1),
  quality_rating: QualityRatingSchema.nullable(),
});
export type ReviewFeedback = z.infer<typeof ReviewFeedbackSchema>;

/** orchestrator → agent-runner: run one agent execution. */
export const ExecutionRequestedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema,
  kind: ExecutionKindSchema,
  agent_name: z.string().min(1),
  /** 1-based position of the agent within its stage. */
  agent_index: z.number().int().positive(),
  /** Context prepared by the orchestrator (previous stages, synthesis input, chat investigation). */
  context: z.string().optional(),
  /** Chat turn being answered, for kind `chat`. */
  chat: z.object({ chat_id: IdSchema, message_id: IdSchema, question: z.string() }).optional(),
  /** The reviewer's feedback, for kind `feedback_reflection`. */
  feedback: ReviewFeedbackSchema.optional(),
  deadline_at: TimestampSchema.optional(),
  /**
   * Which limit `deadline_at` is, as the execution's error says it when the runner stops it
   * there ("session timed out after 20s (queue.session_timeout)"), so that the runner and the
   * orchestrator's own deadline check write the same reason whichever comes first.
   */
  deadline_reason: z.string().min(1).optional(),
  /** Sub-agents: the execution that dispatched this one. */
  parent_execution_id: IdSchema.optional(),
  /** Sub-agents: the task their parent gave them (their whole user prompt). */
  task: z.string().min(1).optional(),
  /**
   * A suspended parent's resumption (its sub-agents reported): the runner continues the stored
   * conversation instead of starting over.
   */
  resume: z.boolean().optional(),
  requested_at: TimestampSchema,
});
export type ExecutionRequested = z.infer<typeof ExecutionRequestedSchema>;

/** agent-runner → orchestrator: an execution reached a terminal status. */
export const ExecutionFinishedSchema = z.object({
  v: V1,
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema,
  kind: ExecutionKindSchema,
  status: ExecutionStatusSchema.exclude(["pending", "active"]),
  final_analysis: z.string().nullable(),
  /**
   * Action executions only: the agent's YES/NO last line (stripped from `final_analysis`);
   * null when it was missing or unreadable. Absent for other kinds.
   */
  actions_executed: z.boolean().nullable().optional(),
  /**
   * Executive summaries only: the canonical names of its `LABELS:` line (stripped from
   * `final_analysis`), `[]` without one, null when the line could not be read. Absent for
   * other kinds.
   */
  labels: SessionLabelsSchema.optional(),
  /** Iterating agents made to conclude: why (absent when the agent concluded by itself). */
  forced_conclusion: ForcedConclusionReasonSchema.optional(),
  error: z.string().nullable(),
  token_usage: TokenUsageSchema.nullable(),
  /** Sub-agents: the parent to wake with this outcome. */
  parent_execution_id: IdSchema.optional(),
  finished_at: TimestampSchema,
});
export type ExecutionFinished = z.infer<typeof ExecutionFinishedSchema>;

/** Written by the bus when a message exhausted its deliveries or could not be parsed. */
export const DeadLetterSchema = z.object({
  v: V1,
  original_subject: z.string().min(1),
  stream: z.string().min(1),
  stream_seq: z.number().int().nonnegative(),
  deliveries: z.number().int().nonnegative(),
  error: z.string(),
  /** The original body as received (JSON text when it was JSON). */
  data: z.string(),
  headers: JsonObjectSchema.optional(),
  failed_at: TimestampSchema,
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;
