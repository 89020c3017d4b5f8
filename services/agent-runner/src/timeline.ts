import { type Bus, type PersistentMessage, publishWithRetry } from "@tarsy/bus";
import type { TimelineEventStatus, TimelineEventType } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { RunnerStore, TimelineEventRecord } from "./ports.ts";

export type EventBus = Pick<Bus, "publishMessage" | "publishTransient">;

/**
 * How long a timeline event's publish is retried while NATS is unreachable: within the
 * events stream's duplicate window (2 min), so a retry of a publish that was in fact stored
 * is still dropped as a repeat.
 */
export const EVENT_PUBLISH_RETRY_MS = 60_000;

type TimelineMessage = PersistentMessage<"timelineEventCreated" | "timelineEventCompleted">;

export interface TimelineScope {
  sessionId: string;
  stageId: string | null;
  executionId: string | null;
}

/** A timeline event this execution created; `content` grows while it streams. */
export interface LiveEvent {
  readonly record: TimelineEventRecord;
  content: string;
  metadata: Record<string, unknown> | null;
  done: boolean;
}

/**
 * Writes timeline events to Postgres and publishes them: `timeline_event.created` and
 * `timeline_event.completed` to the events stream, token deltas as transient `stream.chunk`.
 * A persistent event's publish is retried while NATS is away (`EVENT_PUBLISH_RETRY_MS`), so
 * a blip delays it but live viewers still get it; the stream drops a repeat by its message
 * id. Past that it is logged and the execution goes on (the row is the record). A lost
 * chunk is only logged: the completed event carries the whole text.
 */
export class Timeline {
  constructor(
    private readonly store: RunnerStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    readonly scope: TimelineScope,
    private readonly retryForMs = EVENT_PUBLISH_RETRY_MS,
  ) {}

  /** Starts a streaming event (or a finished one when `status` is terminal). */
  async create(
    eventType: TimelineEventType,
    options: {
      content?: string;
      metadata?: Record<string, unknown> | null;
      status?: TimelineEventStatus;
      scope?: TimelineScope;
    } = {},
  ): Promise<LiveEvent> {
    const scope = options.scope ?? this.scope;
    const status = options.status ?? "streaming";
    const record = await this.store.createTimelineEvent({
      ...scope,
      eventType,
      status,
      content: options.content ?? "",
      metadata: options.metadata ?? null,
    });
    await this.publish({
      key: "timelineEventCreated",
      payload: {
        v: 1,
        type: "timeline_event.created",
        session_id: record.sessionId,
        stage_id: record.stageId,
        execution_id: record.executionId,
        event_id: record.id,
        sequence_number: record.sequenceNumber,
        event_type: record.eventType,
        status: record.status,
        content: record.content,
        metadata: record.metadata,
        timestamp: record.createdAt.toISOString(),
      },
    });
    return {
      record,
      content: record.content,
      metadata: record.metadata,
      done: status !== "streaming",
    };
  }

  /** One token delta: accumulated in memory, sent to live viewers, never stored. */
  delta(event: LiveEvent, delta: string): void {
    if (event.done || delta.length === 0) return;
    event.content += delta;
    this.publishChunk(event, delta, false);
  }

  /**
   * Voids what was streamed into a still-open event (its LLM call was cut and is retried):
   * the content starts afresh and live viewers get a `reset` chunk telling them to drop it.
   */
  reset(event: LiveEvent): void {
    if (event.done) return;
    event.content = "";
    this.publishChunk(event, "", true);
  }

  private publishChunk(event: LiveEvent, delta: string, reset: boolean): void {
    try {
      this.bus.publishTransient("streamChunk", {
        v: 1,
        type: "stream.chunk",
        session_id: event.record.sessionId,
        stage_id: event.record.stageId,
        execution_id: event.record.executionId,
        event_id: event.record.id,
        delta,
        ...(reset && { reset: true }),
        timestamp: new Date().toISOString(),
      });
    } catch (err) {
      this.logger.warn({ err, event_id: event.record.id }, "stream chunk not published");
    }
  }

  /** Ends a streaming event with its full content (idempotent). */
  async complete(
    event: LiveEvent,
    options: {
      status?: Exclude<TimelineEventStatus, "streaming">;
      content?: string;
      metadata?: Record<string, unknown> | null;
      eventType?: TimelineEventType;
    } = {},
  ): Promise<void> {
    if (event.done) return;
    event.done = true;
    const content = options.content ?? event.content;
    const metadata =
      options.metadata === undefined
        ? event.metadata
        : options.metadata === null
          ? null
          : { ...event.metadata, ...options.metadata };
    event.content = content;
    event.metadata = metadata;
    const record = await this.store.completeTimelineEvent(event.record.id, {
      ...(options.eventType && { eventType: options.eventType }),
      status: options.status ?? "completed",
      content,
      metadata,
    });
    if (!record) return;
    await this.publishCompleted(record);
  }

  /** Publishes `timeline_event.completed` for a row already ended in the store. */
  async publishCompleted(record: TimelineEventRecord): Promise<void> {
    await this.publish({
      key: "timelineEventCompleted",
      payload: {
        v: 1,
        type: "timeline_event.completed",
        session_id: record.sessionId,
        stage_id: record.stageId,
        execution_id: record.executionId,
        event_id: record.id,
        event_type: record.eventType,
        status: record.status,
        content: record.content,
        metadata: record.metadata,
        timestamp: record.updatedAt.toISOString(),
      },
    });
  }

  private async publish(message: TimelineMessage): Promise<void> {
    const { key } = message;
    const eventId = message.payload.event_id;
    try {
      await publishWithRetry(this.bus, message, {
        retryForMs: this.retryForMs,
        onRetry: (err, attempt, delayMs) =>
          this.logger.warn(
            { err, key, event_id: eventId, attempt, delay_ms: delayMs },
            "timeline event not published yet; retrying",
          ),
      });
    } catch (err) {
      this.logger.error({ err, key, event_id: eventId }, "timeline event not published");
    }
  }
}
