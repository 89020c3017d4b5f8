import { z } from "zod";
import { ActionStatusEventSchema } from "./api-actions.ts";
import { ReviewStateShape, ScoringStatusSchema } from "./api-review.ts";
import { IdSchema, JsonObjectSchema, TimestampSchema, V1 } from "./common.ts";
import {
  ParallelTypeSchema,
  SessionStatusSchema,
  StageEventStatusSchema,
  TimelineEventStatusSchema,
  TimelineEventTypeSchema,
} from "./enums.ts";

/**
 * Persistent events (stream TARSY_EVENTS). The JetStream sequence of the stored message is
 * the event id a WebSocket client acknowledges; it is not part of the payload.
 */
export const TimelineEventCreatedSchema = z.object({
  v: V1,
  type: z.literal("timeline_event.created"),
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  event_id: IdSchema,
  sequence_number: z.number().int().positive(),
  event_type: TimelineEventTypeSchema,
  status: TimelineEventStatusSchema,
  content: z.string(),
  metadata: JsonObjectSchema.nullable(),
  timestamp: TimestampSchema,
});
export type TimelineEventCreated = z.infer<typeof TimelineEventCreatedSchema>;

export const TimelineEventCompletedSchema = z.object({
  v: V1,
  type: z.literal("timeline_event.completed"),
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  event_id: IdSchema,
  event_type: TimelineEventTypeSchema,
  status: TimelineEventStatusSchema,
  content: z.string(),
  metadata: JsonObjectSchema.nullable(),
  timestamp: TimestampSchema,
});
export type TimelineEventCompleted = z.infer<typeof TimelineEventCompletedSchema>;

export const SessionStatusEventSchema = z.object({
  v: V1,
  type: z.literal("session.status"),
  session_id: IdSchema,
  status: SessionStatusSchema,
  alert_type: z.string().optional(),
  chain_id: z.string().optional(),
  /** Name of the stage running now, for list progress. */
  current_stage: z.string().nullable().optional(),
  error: z.string().nullable().optional(),
  /** With `cancelled` (and `timed_out`): who stopped the session (see the session API). */
  cancelled_by: z.string().nullable().optional(),
  /** With `cancelled_by`: why, when a reason was given. */
  cancel_reason: z.string().nullable().optional(),
  timestamp: TimestampSchema,
});
export type SessionStatusEvent = z.infer<typeof SessionStatusEventSchema>;

export const StageStatusEventSchema = z.object({
  v: V1,
  type: z.literal("stage.status"),
  session_id: IdSchema,
  stage_id: IdSchema,
  stage_name: z.string(),
  /** 1-based. */
  stage_index: z.number().int().positive(),
  status: StageEventStatusSchema,
  parallel_type: ParallelTypeSchema.nullable().optional(),
  expected_agent_count: z.number().int().positive().optional(),
  chat_id: IdSchema.nullable().optional(),
  error: z.string().nullable().optional(),
  timestamp: TimestampSchema,
});
export type StageStatusEvent = z.infer<typeof StageStatusEventSchema>;

export const ChatCreatedEventSchema = z.object({
  v: V1,
  type: z.literal("chat.created"),
  session_id: IdSchema,
  chat_id: IdSchema,
  created_by: z.string(),
  timestamp: TimestampSchema,
});
export type ChatCreatedEvent = z.infer<typeof ChatCreatedEventSchema>;

export const ChatUserMessageEventSchema = z.object({
  v: V1,
  type: z.literal("chat.user_message"),
  session_id: IdSchema,
  chat_id: IdSchema,
  message_id: IdSchema,
  content: z.string(),
  author: z.string(),
  stage_id: IdSchema.nullable(),
  timestamp: TimestampSchema,
});
export type ChatUserMessageEvent = z.infer<typeof ChatUserMessageEventSchema>;

/**
 * A session was deleted (soft: by `DELETE /api/v1/sessions/:id` or the retention job): lists
 * drop it, and nothing more is sent about it.
 */
export const SessionDeletedEventSchema = z.object({
  v: V1,
  type: z.literal("session.deleted"),
  session_id: IdSchema,
  timestamp: TimestampSchema,
});
export type SessionDeletedEvent = z.infer<typeof SessionDeletedEventSchema>;

/**
 * A session's review state changed (it ended, or someone claimed, rated or reopened it), with
 * who did it (`system` when the session's end set it). On the session's channel and the
 * sessions channel, so the triage view updates live.
 */
export const ReviewStatusEventSchema = z.object({
  v: V1,
  type: z.literal("review.status"),
  session_id: IdSchema,
  ...ReviewStateShape,
  actor: z.string(),
  /** The activity row this change wrote (absent for the system's initial state). */
  activity_id: IdSchema.optional(),
  timestamp: TimestampSchema,
});
export type ReviewStatusEvent = z.infer<typeof ReviewStatusEventSchema>;

/** A session's scoring started or ended; on the session's channel and the sessions channel. */
export const SessionScoreUpdatedEventSchema = z.object({
  v: V1,
  type: z.literal("session.score_updated"),
  session_id: IdSchema,
  score_id: IdSchema,
  scoring_status: ScoringStatusSchema,
  /** Set once completed. */
  total_score: z.number().int().nullable(),
  timestamp: TimestampSchema,
});
export type SessionScoreUpdatedEvent = z.infer<typeof SessionScoreUpdatedEventSchema>;

/** Any persistent event, discriminated by `type`. */
export const PersistentEventSchema = z.discriminatedUnion("type", [
  TimelineEventCreatedSchema,
  TimelineEventCompletedSchema,
  SessionStatusEventSchema,
  SessionDeletedEventSchema,
  StageStatusEventSchema,
  ChatCreatedEventSchema,
  ChatUserMessageEventSchema,
  ReviewStatusEventSchema,
  SessionScoreUpdatedEventSchema,
  ActionStatusEventSchema,
]);
export type PersistentEvent = z.infer<typeof PersistentEventSchema>;
export const PersistentEventTypeSchema = z.enum([
  "timeline_event.created",
  "timeline_event.completed",
  "session.status",
  "session.deleted",
  "stage.status",
  "chat.created",
  "chat.user_message",
  "review.status",
  "session.score_updated",
  "action.status",
]);
export type PersistentEventType = z.infer<typeof PersistentEventTypeSchema>;

/** Transient (core NATS, never stored): one LLM token delta of a streaming timeline event. */
export const StreamChunkSchema = z.object({
  v: V1,
  type: z.literal("stream.chunk"),
  session_id: IdSchema,
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema.nullable(),
  event_id: IdSchema,
  delta: z.string(),
  /**
   * The text streamed so far for `event_id` is void (the LLM call was cut and is being
   * retried): viewers replace the event's content with `delta` instead of appending it.
   */
  reset: z.boolean().optional(),
  timestamp: TimestampSchema,
});
export type StreamChunk = z.infer<typeof StreamChunkSchema>;

/**
 * Transient control message: abort in-flight work of a session (all of it, one chat turn, or
 * one execution: a sub-agent its parent cancelled).
 */
export const CancelControlSchema = z.object({
  v: V1,
  session_id: IdSchema,
  scope: z.enum(["session", "chat", "execution"]),
  stage_id: IdSchema.optional(),
  execution_id: IdSchema.optional(),
  reason: z.enum(["cancelled", "timed_out"]),
  timestamp: TimestampSchema,
});
export type CancelControl = z.infer<typeof CancelControlSchema>;
