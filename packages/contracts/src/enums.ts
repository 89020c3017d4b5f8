import { z } from "zod";

export const SessionStatusSchema = z.enum([
  "pending",
  "in_progress",
  "cancelling",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
]);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;
/** Ended: nothing runs for the session any more. */
export const TERMINAL_SESSION_STATUSES: readonly SessionStatus[] = [
  "completed",
  "failed",
  "cancelled",
  "timed_out",
];
/**
 * What a notification is sent for: a session's start, each way it ends, and an action request
 * that waits for a person's decision.
 */
export const NotificationEventSchema = z.enum([
  "started",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
  "action_requested",
]);
export type NotificationEvent = z.infer<typeof NotificationEventSchema>;
export const NOTIFICATION_EVENTS = NotificationEventSchema.options;

/** Not ended: waiting for admission, running, or being cancelled. */
export const ACTIVE_SESSION_STATUSES: readonly SessionStatus[] = [
  "pending",
  "in_progress",
  "cancelling",
];
/** Admitted and not ended: these occupy an admission slot. */
export const RUNNING_SESSION_STATUSES: readonly SessionStatus[] = ["in_progress", "cancelling"];
/** Ended sessions that accept follow-up chat (a cancelled one does not). */
export const CHAT_SESSION_STATUSES: readonly SessionStatus[] = ["completed", "failed", "timed_out"];

/** Status of a Stage or an AgentExecution. */
export const ExecutionStatusSchema = z.enum([
  "pending",
  "active",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
]);
export type ExecutionStatus = z.infer<typeof ExecutionStatusSchema>;
export const StageStatusSchema = ExecutionStatusSchema;
export type StageStatus = ExecutionStatus;
/** Ended: the stage or execution will not run again. */
export const TERMINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  "completed",
  "failed",
  "cancelled",
  "timed_out",
];
/** Not ended: waiting for a runner, or running. */
export const ACTIVE_EXECUTION_STATUSES: readonly ExecutionStatus[] = ["pending", "active"];

/** The `status` field of a `stage.status` event. */
export const StageEventStatusSchema = z.enum([
  "started",
  "completed",
  "failed",
  "timed_out",
  "cancelled",
]);
export type StageEventStatus = z.infer<typeof StageEventStatusSchema>;

/**
 * What a stage is for; `action` when every agent of the stage is an action agent; `compose`
 * the amended report the orchestrator adds after a successful action stage (ADR-0025).
 */
export const StageKindSchema = z.enum([
  "investigation",
  "synthesis",
  "chat",
  "scoring",
  "action",
  "compose",
]);
export type StageKind = z.infer<typeof StageKindSchema>;

export const ParallelTypeSchema = z.enum(["multi_agent", "replica"]);
export type ParallelType = z.infer<typeof ParallelTypeSchema>;

export const SuccessPolicySchema = z.enum(["all", "any"]);
export type SuccessPolicy = z.infer<typeof SuccessPolicySchema>;

/** What an agent execution is for; selects the controller and prompting. */
export const ExecutionKindSchema = z.enum([
  "investigation",
  "synthesis",
  "chat",
  "executive_summary",
  "scoring",
  "action",
  /** Investigation memory: a reviewer's written feedback turned into memories (#24). */
  "feedback_reflection",
  /** The amended report: the upstream report and the action memo merged in one call (#31). */
  "compose",
]);
export type ExecutionKind = z.infer<typeof ExecutionKindSchema>;

export const TimelineEventTypeSchema = z.enum([
  "llm_thinking",
  "llm_response",
  "llm_tool_call",
  "mcp_tool_summary",
  "error",
  "user_question",
  "executive_summary",
  "final_analysis",
  "code_execution",
  "google_search_result",
  "url_context_result",
  "provider_fallback",
  "skill_loaded",
  "memory_injected",
  "task_assigned",
  "sub_agent_result",
  /** A runner continued an interrupted attempt's conversation, or started over (with why). */
  "execution_resumed",
]);
export type TimelineEventType = z.infer<typeof TimelineEventTypeSchema>;

export const TimelineEventStatusSchema = z.enum([
  "streaming",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
]);
export type TimelineEventStatus = z.infer<typeof TimelineEventStatusSchema>;

export const MessageRoleSchema = z.enum(["system", "user", "assistant", "tool"]);
export type MessageRole = z.infer<typeof MessageRoleSchema>;

export const LLMInteractionTypeSchema = z.enum([
  "iteration",
  "final_analysis",
  "forced_conclusion",
  "summarization",
  "synthesis",
  "executive_summary",
  "chat_response",
  "scoring",
  "memory_extraction",
  /** The compose stage's call (the amended report). */
  "composition",
]);
export type LLMInteractionType = z.infer<typeof LLMInteractionTypeSchema>;

export const MCPInteractionTypeSchema = z.enum(["tool_call", "tool_list"]);
export type MCPInteractionType = z.infer<typeof MCPInteractionTypeSchema>;

/**
 * Why an iterating agent was made to give a forced conclusion: it used up `max_iterations`, or
 * its time budget reached the wrap-up reserve before its deadline (`time_budget`).
 */
export const ForcedConclusionReasonSchema = z.enum(["max_iterations", "time_budget"]);
export type ForcedConclusionReason = z.infer<typeof ForcedConclusionReasonSchema>;

/** How a forced conclusion's reason reads to people: "max iterations", "time budget". */
export function forcedConclusionLabel(reason: ForcedConclusionReason): string {
  return reason.replace("_", " ");
}
