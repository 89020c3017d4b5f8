/**
 * TimelineEvent (what the user sees). Sequence numbers come from a per-session counter on
 * the session row, bumped atomically, so parallel agents of one session never collide.
 * Numbers strictly increase in allocation order; a failed insert leaves a gap.
 */
import type { TimelineEventStatus, TimelineEventType } from "@tarsy/contracts";
import type { DbClient } from "./client.ts";
import { SessionNotFoundError } from "./errors.ts";
import type { Prisma, TimelineEvent } from "./generated/prisma/client.ts";
import { toModel } from "./rows.ts";

export interface TimelineEventInput {
  /** Optional caller-chosen uuid (lets a redelivered runner reuse its ids). */
  readonly id?: string;
  readonly sessionId: string;
  /** Null for session-level events. */
  readonly stageId?: string | null;
  readonly executionId?: string | null;
  readonly eventType: TimelineEventType;
  /** Default `streaming` (content grows, then `completeTimelineEvent`). */
  readonly status?: TimelineEventStatus;
  readonly content?: string;
  readonly metadata?: Prisma.InputJsonObject | null;
}

/**
 * Creates an event with the next sequence number of its session, in one statement (one
 * round trip; the session row is locked only for that statement).
 */
export async function createTimelineEvent(
  client: DbClient,
  input: TimelineEventInput,
): Promise<TimelineEvent> {
  const metadata = input.metadata == null ? null : JSON.stringify(input.metadata);
  const rows = await client.$queryRaw<Record<string, unknown>[]>`
    WITH seq AS (
      UPDATE alert_sessions SET timeline_sequence = timeline_sequence + 1
      WHERE id = ${input.sessionId}::uuid RETURNING timeline_sequence
    )
    INSERT INTO timeline_events (id, session_id, stage_id, execution_id, sequence_number,
                                 event_type, status, content, metadata)
    SELECT COALESCE(${input.id ?? null}::uuid, gen_random_uuid()), ${input.sessionId}::uuid,
           ${input.stageId ?? null}::uuid, ${input.executionId ?? null}::uuid,
           seq.timeline_sequence, ${input.eventType}::timeline_event_type,
           ${input.status ?? "streaming"}::timeline_event_status, ${input.content ?? ""},
           ${metadata}::jsonb
    FROM seq
    RETURNING *`;
  const row = rows[0];
  if (row === undefined) throw new SessionNotFoundError(input.sessionId);
  return toModel<TimelineEvent>(row);
}

export interface CompleteTimelineEventInput {
  /** Final content; omit to keep what was streamed. */
  readonly content?: string;
  /** Default `completed`. */
  readonly status?: Exclude<TimelineEventStatus, "streaming">;
  /** Merged into the existing metadata (keys given here win). */
  readonly metadata?: Prisma.InputJsonObject;
  /** Retypes the event, e.g. a streamed `llm_response` that turned out to be `final_analysis`. */
  readonly eventType?: TimelineEventType;
}

/**
 * Finishes a streaming event. Returns the event, or null if it was not streaming any more
 * (already completed by an earlier delivery), so callers publish `completed` only once.
 */
export async function completeTimelineEvent(
  client: DbClient,
  eventId: string,
  input: CompleteTimelineEventInput = {},
): Promise<TimelineEvent | null> {
  const metadata = input.metadata === undefined ? null : JSON.stringify(input.metadata);
  const count = await client.$executeRaw`
    UPDATE timeline_events SET
      status = ${input.status ?? "completed"}::timeline_event_status,
      event_type = COALESCE(${input.eventType ?? null}::timeline_event_type, event_type),
      content = COALESCE(${input.content ?? null}::text, content),
      metadata = CASE WHEN ${metadata}::jsonb IS NULL THEN metadata
                      ELSE COALESCE(metadata, '{}'::jsonb) || ${metadata}::jsonb END,
      updated_at = now()
    WHERE id = ${eventId}::uuid AND status = 'streaming'`;
  if (count !== 1) return null;
  return client.timelineEvent.findUnique({ where: { id: eventId } });
}

/**
 * Ends the still-streaming events of executions that are being stopped (cancel, timeout) with
 * `status`, keeping what content they hold. Returns the events it ended, so their `completed`
 * event goes out before the session's terminal status; the runner's own later completion of
 * them is then a no-op.
 */
export async function endStreamingEvents(
  client: DbClient,
  executionIds: readonly string[],
  status: Exclude<TimelineEventStatus, "streaming">,
): Promise<TimelineEvent[]> {
  if (executionIds.length === 0) return [];
  const open = await client.timelineEvent.findMany({
    where: { executionId: { in: [...executionIds] }, status: "streaming" },
    orderBy: { sequenceNumber: "asc" },
  });
  const ended: TimelineEvent[] = [];
  for (const event of open) {
    const done = await completeTimelineEvent(client, event.id, { status });
    if (done) ended.push(done);
  }
  return ended;
}

/** The whole session's timeline, in sequence order (investigation and chat context). */
export function listSessionTimeline(client: DbClient, sessionId: string): Promise<TimelineEvent[]> {
  return client.timelineEvent.findMany({
    where: { sessionId },
    orderBy: { sequenceNumber: "asc" },
  });
}

/** One execution's timeline, in sequence order (synthesis input). */
export function listExecutionTimeline(
  client: DbClient,
  executionId: string,
): Promise<TimelineEvent[]> {
  return client.timelineEvent.findMany({
    where: { executionId },
    orderBy: { sequenceNumber: "asc" },
  });
}
