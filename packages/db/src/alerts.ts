/**
 * Sessions as Alertmanager's alerts: a firing alert is matched to the sessions of the same
 * fingerprint (or group key) so it is investigated once, and a resolved alert marks its session.
 */
import type { SessionStatus } from "@tarsy/contracts";
import { type DbClient, inTransaction, type Tx } from "./client.ts";
import type { AlertSession } from "./generated/prisma/client.ts";

/** Which sessions belong to an alert: one fingerprint, or one Alertmanager group. */
export type AlertMatch = { readonly alertFingerprint: string } | { readonly alertGroupKey: string };

/**
 * Runs `fn` in a transaction holding an advisory lock on `key` (e.g. the alert's fingerprint),
 * so concurrent notifications of one alert are decided one after the other.
 */
export function withAlertLock<T>(
  client: DbClient,
  key: string,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  return inTransaction(client, async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${key}))`;
    return fn(tx);
  });
}

/**
 * The newest session of the alert that a new one would duplicate: one in `open` statuses, or
 * one completed no earlier than `completedSince`. Its id, or null.
 */
export async function findDuplicateAlertSession(
  client: DbClient,
  match: AlertMatch,
  open: readonly SessionStatus[],
  completedSince: Date,
): Promise<string | null> {
  const existing = await client.alertSession.findFirst({
    where: {
      ...match,
      deletedAt: null,
      OR: [
        { status: { in: [...open] } },
        { status: "completed", createdAt: { gte: completedSince } },
      ],
    },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  return existing?.id ?? null;
}

/** The alert's sessions, newest first (soft-deleted ones left out). */
export function listAlertSessions(client: DbClient, match: AlertMatch): Promise<AlertSession[]> {
  return client.alertSession.findMany({
    where: { ...match, deletedAt: null },
    orderBy: { createdAt: "desc" },
  });
}

/**
 * Marks the alert's newest session resolved at `at` (only the first time). Returns the
 * session's id, or null when the alert has none.
 */
export async function markAlertResolved(
  client: DbClient,
  match: AlertMatch,
  at: Date,
): Promise<string | null> {
  const session = await client.alertSession.findFirst({
    where: { ...match, deletedAt: null },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  if (!session) return null;
  await client.alertSession.updateMany({
    where: { id: session.id, alertResolvedAt: null },
    data: { alertResolvedAt: at },
  });
  return session.id;
}
