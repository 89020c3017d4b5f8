/**
 * Notification deliveries: one row per session, target, event and subject (the action request
 * an `action_requested` announces; empty for the session's own events), so a redelivered event or a
 * second notifier replica never sends twice. A sender claims the row for a lease
 * (`claimed_by`, `lease_until`); a failed send releases it (`claimed_by` null) with its retry
 * time in `lease_until`. A claim whose holder died (lease run out, never released) is "in
 * doubt": the send may have happened, and the next sender looks before sending again.
 */
import type { DbClient } from "./client.ts";
import type { NotificationDelivery } from "./generated/prisma/client.ts";

export interface DeliveryKey {
  readonly sessionId: string;
  readonly target: string;
  readonly event: string;
  /** The action request an `action_requested` delivery announces; unset: the session's own. */
  readonly subject?: string;
}

export type DeliveryClaim =
  /** Ours until `leaseUntil`; `inDoubt`: an earlier holder died mid-send. */
  | { readonly kind: "claimed"; readonly delivery: NotificationDelivery; readonly inDoubt: boolean }
  /** Already sent, or given up on. */
  | { readonly kind: "done"; readonly delivery: NotificationDelivery }
  /** Another sender holds a live claim. */
  | { readonly kind: "busy"; readonly leaseUntil: Date };

interface DeliveryRow {
  id: string;
  session_id: string;
  target: string;
  event: string;
  subject: string;
  status: NotificationDelivery["status"];
  attempts: number;
  claimed_by: string | null;
  lease_until: Date | null;
  thread_ts: string | null;
  message_ts: string | null;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const toDelivery = (row: DeliveryRow): NotificationDelivery => ({
  id: row.id,
  sessionId: row.session_id,
  target: row.target,
  event: row.event,
  subject: row.subject,
  status: row.status,
  attempts: row.attempts,
  claimedBy: row.claimed_by,
  leaseUntil: row.lease_until,
  threadTs: row.thread_ts,
  messageTs: row.message_ts,
  lastError: row.last_error,
  createdAt: row.created_at,
  sentAt: row.sent_at,
});

/**
 * Claims the delivery for `owner` until now + `leaseMs`: creates it on first sight, else takes
 * it over when it is unsent and due (its lease or retry time has passed).
 */
export async function claimDelivery(
  client: DbClient,
  key: DeliveryKey,
  owner: string,
  leaseMs: number,
): Promise<DeliveryClaim> {
  const lease = interval(leaseMs);
  const subject = key.subject ?? "";
  const created = await client.$queryRaw<DeliveryRow[]>`
    INSERT INTO notification_deliveries (session_id, target, event, subject, attempts, claimed_by, lease_until)
    VALUES (${key.sessionId}::uuid, ${key.target}, ${key.event}, ${subject}, 1, ${owner}, now() + ${lease}::interval)
    ON CONFLICT (session_id, target, event, subject) DO NOTHING
    RETURNING *`;
  const fresh = created[0];
  if (fresh) return { kind: "claimed", delivery: toDelivery(fresh), inDoubt: false };

  const taken = await client.$queryRaw<ClaimedRow[]>`
    WITH due AS (
      SELECT id, claimed_by FROM notification_deliveries
      WHERE session_id = ${key.sessionId}::uuid AND target = ${key.target} AND event = ${key.event}
        AND subject = ${subject} AND status = 'sending' AND lease_until < now()
      FOR UPDATE SKIP LOCKED
    )
    UPDATE notification_deliveries d
    SET attempts = d.attempts + 1, claimed_by = ${owner}, lease_until = now() + ${lease}::interval
    FROM due
    WHERE d.id = due.id
    RETURNING d.*, due.claimed_by AS previous_holder`;
  const row = taken[0];
  if (row) return claimed(row);
  const current = await client.notificationDelivery.findUnique({
    where: {
      sessionId_target_event_subject: {
        sessionId: key.sessionId,
        target: key.target,
        event: key.event,
        subject,
      },
    },
  });
  if (!current) throw new Error(`notification delivery ${key.target}/${key.event} vanished`);
  if (current.status !== "sending") return { kind: "done", delivery: current };
  return { kind: "busy", leaseUntil: current.leaseUntil ?? new Date() };
}

/**
 * Claims up to `limit` unsent deliveries that are due: a retry whose time has come, or a claim
 * whose holder died (in doubt). Replicas never claim the same row.
 */
export async function claimDueDeliveries(
  client: DbClient,
  owner: string,
  leaseMs: number,
  limit: number,
): Promise<Extract<DeliveryClaim, { kind: "claimed" }>[]> {
  const rows = await client.$queryRaw<ClaimedRow[]>`
    WITH due AS (
      SELECT id, claimed_by FROM notification_deliveries
      WHERE status = 'sending' AND lease_until < now()
      ORDER BY lease_until
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE notification_deliveries d
    SET attempts = d.attempts + 1, claimed_by = ${owner},
        lease_until = now() + ${interval(leaseMs)}::interval
    FROM due
    WHERE d.id = due.id
    RETURNING d.*, due.claimed_by AS previous_holder`;
  return rows.map(claimed);
}

type ClaimedRow = DeliveryRow & { previous_holder: string | null };

/** A holder that never released its claim died mid-send: the send may have happened. */
const claimed = (row: ClaimedRow): Extract<DeliveryClaim, { kind: "claimed" }> => ({
  kind: "claimed",
  delivery: toDelivery(row),
  inDoubt: row.previous_holder !== null,
});

const interval = (ms: number) => `${Math.max(1, Math.round(ms))} milliseconds`;

/** Remembers the Slack thread the message goes to, before sending (an in-doubt retry looks there). */
export async function noteDeliveryThread(
  client: DbClient,
  id: string,
  threadTs: string | null,
): Promise<void> {
  await client.notificationDelivery.update({ where: { id }, data: { threadTs } });
}

export async function markDeliverySent(
  client: DbClient,
  id: string,
  sent: { readonly messageTs?: string | null } = {},
): Promise<void> {
  await client.notificationDelivery.update({
    where: { id },
    data: {
      status: "sent",
      sentAt: new Date(),
      leaseUntil: null,
      claimedBy: null,
      lastError: null,
      messageTs: sent.messageTs ?? null,
    },
  });
}

/** A send that failed for a known reason: released, to be tried again at `retryAt` (not in doubt). */
export async function releaseDelivery(
  client: DbClient,
  id: string,
  error: string,
  retryAt: Date,
): Promise<void> {
  await client.notificationDelivery.update({
    where: { id },
    data: { leaseUntil: retryAt, claimedBy: null, lastError: error },
  });
}

/** Retries exhausted, or a permanent refusal: never tried again. */
export async function markDeliveryFailed(
  client: DbClient,
  id: string,
  error: string,
): Promise<void> {
  await client.notificationDelivery.update({
    where: { id },
    data: { status: "failed", leaseUntil: null, claimedBy: null, lastError: error },
  });
}

export function listSessionDeliveries(
  client: DbClient,
  sessionId: string,
): Promise<NotificationDelivery[]> {
  return client.notificationDelivery.findMany({
    where: { sessionId },
    orderBy: [{ createdAt: "asc" }, { target: "asc" }],
  });
}
