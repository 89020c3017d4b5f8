/**
 * `@tarsy/db/testing`: states no production path makes, forged for tests (old or stale rows,
 * rows without their outbox messages), and row counts for "stored nothing" checks.
 * Never imported by service code.
 */
import type {
  ExecutionStatus,
  FailureTag,
  ScoringStatus,
  SessionStatus,
  TimelineEventStatus,
  TimelineEventType,
} from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import { initializeReview } from "./reviews.ts";

export interface StoredRowCounts {
  readonly sessions: number;
  readonly chats: number;
  readonly chatUserMessages: number;
  readonly outbox: number;
  /** Outbox rows not yet published. */
  readonly unpublishedOutbox: number;
}

/** How many rows the tables a request writes hold, soft-deleted sessions included. */
export async function countStoredRows(client: DbClient): Promise<StoredRowCounts> {
  const [sessions, chats, chatUserMessages, outbox, unpublishedOutbox] = await Promise.all([
    client.alertSession.count(),
    client.chat.count(),
    client.chatUserMessage.count(),
    client.outboxMessage.count(),
    client.outboxMessage.count({ where: { publishedAt: null } }),
  ]);
  return { sessions, chats, chatUserMessages, outbox, unpublishedOutbox };
}

/** Sessions (soft-deleted included) whose alert fingerprint starts with `prefix`. */
export function countSessionsWithFingerprintPrefix(
  client: DbClient,
  prefix: string,
): Promise<number> {
  return client.alertSession.count({ where: { alertFingerprint: { startsWith: prefix } } });
}

export interface ForgedSessions {
  readonly count: number;
  readonly alertType: string;
  readonly chainId: string;
  readonly alertData: string;
  /** Default `pending`. */
  readonly status?: SessionStatus;
  /**
   * Created this long ago (the n-th row 1 ms later than the one before, so their order is
   * fixed); default: now.
   */
  readonly ageMs?: number;
}

/**
 * Inserts session rows in one statement, as if submitted (and handled) earlier: without their
 * outbox messages, so nothing is announced. Returns their ids.
 */
export async function insertSessionRows(client: DbClient, rows: ForgedSessions): Promise<string[]> {
  const status = rows.status ?? "pending";
  const inserted = await client.$queryRaw<{ id: string }[]>`
    INSERT INTO alert_sessions (alert_data, alert_type, chain_id, status, created_at)
    SELECT ${rows.alertData}, ${rows.alertType}, ${rows.chainId}, ${status}::session_status,
           CASE WHEN ${rows.ageMs ?? null}::int IS NULL THEN now()
                ELSE now() - make_interval(secs => ${rows.ageMs ?? 0}::int / 1000.0)
                           + make_interval(secs => i / 1000.0) END
    FROM generate_series(1, ${rows.count}::int) AS i
    RETURNING id`;
  return inserted.map((row) => row.id);
}

/** Moves a session to `status` regardless of where it is (no transition a handler makes). */
export async function forceSessionStatus(
  client: DbClient,
  id: string,
  status: SessionStatus,
): Promise<void> {
  await client.alertSession.update({ where: { id }, data: { status } });
}

/** Moves every session of an alert type from one status to another (e.g. "all admitted"). */
export async function forceSessionStatusOfType(
  client: DbClient,
  alertType: string,
  from: SessionStatus,
  to: SessionStatus,
): Promise<number> {
  const { count } = await client.alertSession.updateMany({
    where: { alertType, status: from },
    data: { status: to },
  });
  return count;
}

/** Moves a session's creation time back to `createdAt` (an old session). */
export async function backdateSession(
  client: DbClient,
  id: string,
  createdAt: Date,
): Promise<void> {
  await client.alertSession.update({ where: { id }, data: { createdAt } });
}

/** Moves an LLM interaction's creation time to `createdAt` (usage on another day). */
export async function backdateLLMInteraction(
  client: DbClient,
  id: string,
  createdAt: Date,
): Promise<void> {
  await client.lLMInteraction.update({ where: { id }, data: { createdAt } });
}

/** Moves an execution to `status` regardless of where it is (e.g. a finished one back to active). */
export async function forceExecutionStatus(
  client: DbClient,
  id: string,
  status: ExecutionStatus,
): Promise<void> {
  await client.agentExecution.update({ where: { id }, data: { status } });
}

export interface ForgedTimelineEvents {
  readonly count: number;
  readonly eventType: TimelineEventType;
  /** The content of each row; `{n}` is replaced by the row's sequence number. */
  readonly content: string;
  readonly metadata?: Record<string, unknown>;
  /** Default `completed`. */
  readonly status?: TimelineEventStatus;
}

/**
 * Appends finished timeline events to a session in one statement (a long investigation
 * without running one), numbered after what the session holds. Session-level (no stage), and
 * without outbox messages: nothing is announced. Returns the ids in sequence order.
 */
export async function insertTimelineEventRows(
  client: DbClient,
  sessionId: string,
  rows: ForgedTimelineEvents,
): Promise<string[]> {
  const metadata = rows.metadata == null ? null : JSON.stringify(rows.metadata);
  const inserted = await client.$queryRaw<{ id: string; sequence_number: number }[]>`
    WITH seq AS (
      UPDATE alert_sessions SET timeline_sequence = timeline_sequence + ${rows.count}::int
      WHERE id = ${sessionId}::uuid RETURNING timeline_sequence - ${rows.count}::int AS start
    )
    INSERT INTO timeline_events (session_id, sequence_number, event_type, status, content, metadata)
    SELECT ${sessionId}::uuid, seq.start + i, ${rows.eventType}::timeline_event_type,
           ${rows.status ?? "completed"}::timeline_event_status,
           replace(${rows.content}, '{n}', (seq.start + i)::text), ${metadata}::jsonb
    FROM seq, generate_series(1, ${rows.count}::int) AS i
    RETURNING id, sequence_number`;
  return inserted.sort((a, b) => a.sequence_number - b.sequence_number).map((row) => row.id);
}

/** Puts a session in `project` (no production path moves a session between projects). */
export async function forceSessionProject(
  client: DbClient,
  id: string,
  project: string,
): Promise<void> {
  await client.alertSession.update({ where: { id }, data: { project } });
}

export interface StoredSessionUserTokens {
  /** The session row's sealed token (null: none was kept, or it was wiped). */
  readonly session: string | null;
  readonly sessionExpiresAt: Date | null;
  /** Each chat message's sealed token, oldest first. */
  readonly chatMessages: ReadonlyArray<{
    readonly sealed: string | null;
    readonly expiresAt: Date | null;
  }>;
}

/** The sealed user tokens a session's row and its chat messages hold right now, as stored. */
export async function storedUserTokensOf(
  client: DbClient,
  sessionId: string,
): Promise<StoredSessionUserTokens | null> {
  const session = await client.alertSession.findUnique({
    where: { id: sessionId },
    select: { userToken: true, userTokenExpiresAt: true },
  });
  if (!session) return null;
  const messages = await client.chatUserMessage.findMany({
    where: { chat: { sessionId } },
    orderBy: { createdAt: "asc" },
    select: { userToken: true, userTokenExpiresAt: true },
  });
  return {
    session: session.userToken,
    sessionExpiresAt: session.userTokenExpiresAt,
    chatMessages: messages.map((m) => ({ sealed: m.userToken, expiresAt: m.userTokenExpiresAt })),
  };
}

/** Forces a session's status and its completion and deletion times (old sessions for retention). */
export async function forceSessionEnd(
  client: DbClient,
  id: string,
  set: { status: SessionStatus; completedAt: Date | null; deletedAt?: Date | null },
): Promise<void> {
  await client.alertSession.update({
    where: { id },
    data: { status: set.status, completedAt: set.completedAt, deletedAt: set.deletedAt ?? null },
  });
}

/** Every stored session's id and deletion time, soft-deleted ones included. */
export async function storedSessionDeletions(client: DbClient): Promise<Map<string, Date | null>> {
  const rows = await client.alertSession.findMany({ select: { id: true, deletedAt: true } });
  return new Map(rows.map((r) => [r.id, r.deletedAt]));
}

/**
 * Gives forged ended sessions (from `insertSessionRows`) the review state a real end gives
 * them, with its `review.status` outbox event.
 */
export async function initializeForgedReviews(
  client: DbClient,
  ids: readonly string[],
  ended: SessionStatus = "completed",
): Promise<void> {
  for (const id of ids) {
    await inTransaction(client, (tx) => initializeReview(tx, id, ended, new Date()));
  }
}

/** A stored score of a session as the judge would leave it (no scoring stage ran). */
export async function insertSessionScoreRow(
  client: DbClient,
  row: {
    sessionId: string;
    status: ScoringStatus;
    totalScore?: number;
    scoreAnalysis?: string;
    toolImprovementReport?: string;
    failureTags?: FailureTag[];
    errorMessage?: string;
    triggeredBy?: string;
  },
): Promise<string> {
  const done = row.status !== "in_progress";
  const created = await client.sessionScore.create({
    data: {
      sessionId: row.sessionId,
      status: row.status,
      totalScore: row.totalScore ?? null,
      scoreAnalysis: row.scoreAnalysis ?? null,
      toolImprovementReport: row.toolImprovementReport ?? null,
      ...(row.failureTags ? { failureTags: row.failureTags } : {}),
      errorMessage: row.errorMessage ?? null,
      promptHash: "0".repeat(64),
      scoreTriggeredBy: row.triggeredBy ?? "auto",
      completedAt: done ? new Date() : null,
    },
  });
  return created.id;
}
