import type { Bus } from "@tarsy/bus";
import type { TimelineEventStatus, TimelineEventType } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { RunnerStore, TimelineEventRecord } from "./ports.ts";

export type EventBus = Pick<Bus, "publish" | "publishTransient">;

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
 * A failed publish is logged and never stops the execution (the row is the record).
 */
export class Timeline {
  constructor(
    private readonly store: RunnerStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    readonly scope: TimelineScope,
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
    await this.publish("timelineEventCreated", {
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
    await this.publish("timelineEventCompleted", {
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
    });
  }

  private async publish(
    key: "timelineEventCreated" | "timelineEventCompleted",
    payload: Parameters<EventBus["publish"]>[1],
  ): Promise<void> {
    try {
      await this.bus.publish(key, payload as never);
    } catch (err) {
      this.logger.warn({ err, key }, "timeline event not published");
    }
  }
}
