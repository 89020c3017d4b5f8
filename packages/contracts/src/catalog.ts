import type { z } from "zod";
import { ActionStatusEventSchema } from "./api-actions.ts";
import {
  CancelControlSchema,
  ChatCreatedEventSchema,
  ChatUserMessageEventSchema,
  ReviewStatusEventSchema,
  SessionDeletedEventSchema,
  SessionScoreUpdatedEventSchema,
  SessionStatusEventSchema,
  StageStatusEventSchema,
  StreamChunkSchema,
  TimelineEventCompletedSchema,
  TimelineEventCreatedSchema,
} from "./events.ts";
import { MCP_GATEWAY } from "./mcp.ts";
import {
  CancelRequestedSchema,
  ChatSubmittedSchema,
  DeadLetterSchema,
  DeadlineSchema,
  ExecutionFinishedSchema,
  ExecutionRequestedSchema,
  FeedbackSubmittedSchema,
  ScoreRequestedSchema,
  SessionSubmittedSchema,
} from "./work.ts";

/** Subject of one session's channel (relative). */
export const sessionEventsSubject = (sessionId: string): string => `events.session.${sessionId}`;
/** Subject of the global sessions list channel (relative). */
export const SESSIONS_EVENTS_SUBJECT = "events.sessions";
export const sessionChunksSubject = (sessionId: string): string => `chunks.session.${sessionId}`;
export const cancelControlSubject = (sessionId: string): string => `control.cancel.${sessionId}`;
/** Every session's cancel controls: what a runner subscribes to. */
export const CANCEL_CONTROL_WILDCARD = cancelControlSubject("*");
/** Where a poison message from `originalSubject` is parked (relative). */
export const deadLetterSubject = (originalSubject: string): string => `dlq.${originalSubject}`;
/** Every dead letter: the DLQ stream's subjects and a reader's filter. */
export const DEAD_LETTER_WILDCARD = deadLetterSubject(">");

/** The service whose durable consumer reads a work subject (its second token). */
export type WorkConsumerToken = "orchestrator" | "runner";
/** Subject of a work item for one consumer (relative), e.g. `work.runner.execution_requested`. */
export const workSubject = <C extends WorkConsumerToken, K extends string>(consumer: C, kind: K) =>
  `work.${consumer}.${kind}` as const;

/**
 * Subjects here are relative: the bus puts the deployment's prefix (default `tarsy`) in front,
 * e.g. `work.runner.execution_requested` → `tarsy.work.runner.execution_requested`.
 * Stream names get the deployment's suffix, e.g. `TARSY_WORK` → `TARSY_WORK_T1A2B`.
 */
export const STREAMS = {
  work: {
    name: "TARSY_WORK",
    subjects: ["work.>"],
    retention: "workqueue",
    /** Window within which a publish with the same Nats-Msg-Id is dropped. */
    duplicateWindowMs: 2 * 60_000,
    maxAgeMs: 0,
  },
  events: {
    name: "TARSY_EVENTS",
    subjects: ["events.>"],
    retention: "limits",
    duplicateWindowMs: 2 * 60_000,
    maxAgeMs: 7 * 24 * 3600_000,
  },
  dlq: {
    name: "TARSY_DLQ",
    subjects: [DEAD_LETTER_WILDCARD],
    retention: "limits",
    duplicateWindowMs: 2 * 60_000,
    maxAgeMs: 14 * 24 * 3600_000,
  },
} as const;
export type StreamKey = keyof typeof STREAMS;
export type StreamDef = (typeof STREAMS)[StreamKey];

/** A message stored in a JetStream stream. */
export interface PersistentMessageDef<S extends z.ZodType = z.ZodType> {
  readonly transport: "jetstream";
  readonly stream: StreamKey;
  readonly schema: S;
  /** Every subject (relative) the message is published to. */
  readonly subjects: (payload: z.infer<S>) => readonly string[];
  /** Deterministic id, so a retried publish is deduplicated by the stream. */
  readonly msgId: (payload: z.infer<S>) => string;
}

/** A message on core NATS: never stored, delivered to whoever listens now. */
export interface TransientMessageDef<S extends z.ZodType = z.ZodType> {
  readonly transport: "core";
  readonly schema: S;
  readonly subjects: (payload: z.infer<S>) => readonly string[];
}

export type MessageDef = PersistentMessageDef | TransientMessageDef;

const persistent = <S extends z.ZodType>(def: Omit<PersistentMessageDef<S>, "transport">) =>
  ({ transport: "jetstream", ...def }) as const satisfies PersistentMessageDef<S>;
const transient = <S extends z.ZodType>(def: Omit<TransientMessageDef<S>, "transport">) =>
  ({ transport: "core", ...def }) as const satisfies TransientMessageDef<S>;

export const WORK_SUBJECTS = {
  sessionSubmitted: workSubject("orchestrator", "session_submitted"),
  chatSubmitted: workSubject("orchestrator", "chat_submitted"),
  cancelRequested: workSubject("orchestrator", "cancel_requested"),
  deadline: workSubject("orchestrator", "deadline"),
  executionFinished: workSubject("orchestrator", "execution_finished"),
  scoreRequested: workSubject("orchestrator", "score_requested"),
  feedbackSubmitted: workSubject("orchestrator", "feedback_submitted"),
  executionRequested: workSubject("runner", "execution_requested"),
} as const;

/** The single source of truth for every message that crosses NATS. */
export const MESSAGES = {
  // --- work items (stream TARSY_WORK) ---
  sessionSubmitted: persistent({
    stream: "work",
    schema: SessionSubmittedSchema,
    subjects: () => [WORK_SUBJECTS.sessionSubmitted],
    msgId: (p) => `session-submitted.${p.session_id}`,
  }),
  chatSubmitted: persistent({
    stream: "work",
    schema: ChatSubmittedSchema,
    subjects: () => [WORK_SUBJECTS.chatSubmitted],
    msgId: (p) => `chat-submitted.${p.message_id}`,
  }),
  cancelRequested: persistent({
    stream: "work",
    schema: CancelRequestedSchema,
    subjects: () => [WORK_SUBJECTS.cancelRequested],
    msgId: (p) => `cancel-requested.${p.session_id}.${p.requested_at}`,
  }),
  deadline: persistent({
    stream: "work",
    schema: DeadlineSchema,
    subjects: () => [WORK_SUBJECTS.deadline],
    msgId: (p) =>
      `deadline.${p.scope}.${p.session_id}.${p.stage_id ?? "-"}${p.execution_id ? `.${p.execution_id}` : ""}`,
  }),
  executionFinished: persistent({
    stream: "work",
    schema: ExecutionFinishedSchema,
    subjects: () => [WORK_SUBJECTS.executionFinished],
    msgId: (p) => `execution-finished.${p.execution_id}`,
  }),
  scoreRequested: persistent({
    stream: "work",
    schema: ScoreRequestedSchema,
    subjects: () => [WORK_SUBJECTS.scoreRequested],
    msgId: (p) => `score-requested.${p.score_id}`,
  }),
  feedbackSubmitted: persistent({
    stream: "work",
    schema: FeedbackSubmittedSchema,
    subjects: () => [WORK_SUBJECTS.feedbackSubmitted],
    msgId: (p) => `feedback-submitted.${p.reflection_id}`,
  }),
  executionRequested: persistent({
    stream: "work",
    schema: ExecutionRequestedSchema,
    subjects: () => [WORK_SUBJECTS.executionRequested],
    // A suspended parent's resumption is a new request each time it is woken.
    msgId: (p) =>
      p.resume
        ? `execution-requested.${p.execution_id}.resume.${p.requested_at}`
        : `execution-requested.${p.execution_id}`,
  }),
  // --- persistent events (stream TARSY_EVENTS) ---
  timelineEventCreated: persistent({
    stream: "events",
    schema: TimelineEventCreatedSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id)],
    msgId: (p) => `timeline-created.${p.event_id}`,
  }),
  timelineEventCompleted: persistent({
    stream: "events",
    schema: TimelineEventCompletedSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id)],
    msgId: (p) => `timeline-completed.${p.event_id}`,
  }),
  sessionStatus: persistent({
    stream: "events",
    schema: SessionStatusEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id), SESSIONS_EVENTS_SUBJECT],
    // Progress (a new current stage) is a new event; a repeat of the same state is not.
    msgId: (p) => `session-status.${p.session_id}.${p.status}.${p.current_stage ?? "-"}`,
  }),
  sessionDeleted: persistent({
    stream: "events",
    schema: SessionDeletedEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id), SESSIONS_EVENTS_SUBJECT],
    msgId: (p) => `session-deleted.${p.session_id}`,
  }),
  stageStatus: persistent({
    stream: "events",
    schema: StageStatusEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id)],
    msgId: (p) => `stage-status.${p.stage_id}.${p.status}`,
  }),
  chatCreated: persistent({
    stream: "events",
    schema: ChatCreatedEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id)],
    msgId: (p) => `chat-created.${p.chat_id}`,
  }),
  chatUserMessage: persistent({
    stream: "events",
    schema: ChatUserMessageEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id)],
    msgId: (p) => `chat-user-message.${p.message_id}`,
  }),
  reviewStatus: persistent({
    stream: "events",
    schema: ReviewStatusEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id), SESSIONS_EVENTS_SUBJECT],
    // One event per review change (its activity row); the system's initial state once.
    msgId: (p) => `review-status.${p.session_id}.${p.activity_id ?? "initial"}`,
  }),
  sessionScoreUpdated: persistent({
    stream: "events",
    schema: SessionScoreUpdatedEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id), SESSIONS_EVENTS_SUBJECT],
    msgId: (p) => `score-updated.${p.score_id}.${p.scoring_status}`,
  }),
  actionStatus: persistent({
    stream: "events",
    schema: ActionStatusEventSchema,
    subjects: (p) => [sessionEventsSubject(p.session_id), SESSIONS_EVENTS_SUBJECT],
    // One event per state of the request: its status, then its call's.
    msgId: (p) => `action-status.${p.action.id}.${p.action.status}.${p.action.call_status}`,
  }),
  // --- dead letters (stream TARSY_DLQ) ---
  deadLetter: persistent({
    stream: "dlq",
    schema: DeadLetterSchema,
    subjects: (p) => [deadLetterSubject(p.original_subject)],
    msgId: (p) => `dead-letter.${p.stream}.${p.stream_seq}`,
  }),
  // --- transient (core NATS) ---
  streamChunk: transient({
    schema: StreamChunkSchema,
    subjects: (p) => [sessionChunksSubject(p.session_id)],
  }),
  cancelControl: transient({
    schema: CancelControlSchema,
    subjects: (p) => [cancelControlSubject(p.session_id)],
  }),
} as const;

export type MessageKey = keyof typeof MESSAGES;
export type PayloadOf<K extends MessageKey> = z.infer<(typeof MESSAGES)[K]["schema"]>;
export type PersistentMessageKey = {
  [K in MessageKey]: (typeof MESSAGES)[K]["transport"] extends "jetstream" ? K : never;
}[MessageKey];
export type TransientMessageKey = Exclude<MessageKey, PersistentMessageKey>;

/**
 * Durable consumers: each reads one filter subject of a stream (NATS 2.9 allows one) and must
 * handle exactly the messages listed. A work message is known by its work subject; the
 * messages of an events consumer share its filter subject and are told apart by their `type`.
 * `deliverFrom: "new"` starts a consumer created on a stream that already holds messages at
 * the end (events from before a first deployment are not acted on).
 */
export const CONSUMERS = {
  orchestrator: {
    stream: "work",
    durable: "orchestrator",
    filterSubject: workSubject("orchestrator", ">"),
    messages: [
      "sessionSubmitted",
      "chatSubmitted",
      "cancelRequested",
      "deadline",
      "executionFinished",
      "scoreRequested",
      "feedbackSubmitted",
    ],
  },
  runner: {
    stream: "work",
    durable: "agent-runner",
    filterSubject: workSubject("runner", ">"),
    messages: ["executionRequested"],
  },
  notifier: {
    stream: "events",
    durable: "notifier",
    filterSubject: SESSIONS_EVENTS_SUBJECT,
    /** The review and score events share the subject; the notifier acknowledges them unread. */
    messages: [
      "sessionStatus",
      "sessionDeleted",
      "reviewStatus",
      "sessionScoreUpdated",
      "actionStatus",
    ],
    deliverFrom: "new",
  },
} as const satisfies Record<
  string,
  {
    stream: StreamKey;
    durable: string;
    filterSubject: string;
    messages: readonly MessageKey[];
    deliverFrom?: "all" | "new";
  }
>;
export type ConsumerKey = keyof typeof CONSUMERS;
export type ConsumerMessageKey<C extends ConsumerKey> = (typeof CONSUMERS)[C]["messages"][number];

/** The subject (relative) a consumer receives a message kind on. */
export function consumerSubjectOf(key: ConsumerKey, message: MessageKey): string {
  const def = CONSUMERS[key];
  return def.stream === "work"
    ? ((WORK_SUBJECTS as Record<string, string>)[message] ?? "")
    : def.filterSubject;
}

/**
 * Every subject the system uses starts with one of these and a dot: the first token of each
 * stream's and each core NATS subject, and the mcp-gateway service's prefix. Outside this
 * package a string literal starting so is a subject spelled by hand, which
 * `scripts/check-wire-literals.sh` fails CI on.
 */
export const SUBJECT_PREFIXES: readonly string[] = [
  ...new Set([
    ...[
      ...Object.values(STREAMS).flatMap((stream) => stream.subjects),
      sessionChunksSubject("*"),
      CANCEL_CONTROL_WILDCARD,
    ].map((subject) => subject.split(".")[0] ?? subject),
    MCP_GATEWAY.subjectPrefix,
  ]),
];
