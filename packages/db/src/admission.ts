/**
 * Admission: the global cap on concurrently running sessions and the FIFO of pending ones.
 * Admission passes are serialized by a transaction-level advisory lock, so N orchestrator
 * replicas together never exceed the cap; rows are claimed with FOR UPDATE SKIP LOCKED so a
 * session held by another handler (e.g. being cancelled) is skipped, not waited for.
 */
import type { DbClient } from "./client.ts";
import { inTransaction } from "./client.ts";
import type { AlertSession } from "./generated/prisma/client.ts";

/** Statuses that occupy an admission slot. */
export const RUNNING_SESSION_STATUSES = ["in_progress", "cancelling"] as const;
const ADMISSION_LOCK_KEY = 0x7a5_ad01;

export async function countRunningSessions(client: DbClient): Promise<number> {
  return client.alertSession.count({
    where: { status: { in: [...RUNNING_SESSION_STATUSES] }, deletedAt: null },
  });
}

export interface AdmitOptions {
  /** Pod (replica) that takes ownership of the admitted sessions. */
  readonly podId: string;
  /** Global cap on running sessions; omit for no cap. */
  readonly maxConcurrent?: number;
  /** Admit at most this many in one pass (default: as many as the cap allows, ≤ 100). */
  readonly limit?: number;
}

/**
 * Moves the oldest pending sessions to in_progress while slots are free and returns them
 * (oldest first). Sessions stay pending when the cap is reached.
 */
export function admitPendingSessions(
  client: DbClient,
  options: AdmitOptions,
): Promise<AlertSession[]> {
  return inTransaction(client, async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADMISSION_LOCK_KEY})`;
    let slots = options.limit ?? 100;
    if (options.maxConcurrent !== undefined) {
      const running = await countRunningSessions(tx);
      slots = Math.min(slots, options.maxConcurrent - running);
    }
    if (slots <= 0) return [];
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM alert_sessions
      WHERE status = 'pending' AND deleted_at IS NULL
      ORDER BY created_at, id
      LIMIT ${slots}
      FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const now = new Date();
    await tx.alertSession.updateMany({
      where: { id: { in: ids }, status: "pending" },
      data: { status: "in_progress", podId: options.podId, startedAt: now, lastInteractionAt: now },
    });
    const admitted = await tx.alertSession.findMany({ where: { id: { in: ids } } });
    const order = new Map(ids.map((id, index) => [id, index]));
    return admitted.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  });
}

/** Admits the single oldest pending session if a slot is free. */
export async function claimNextPendingSession(
  client: DbClient,
  options: Omit<AdmitOptions, "limit">,
): Promise<AlertSession | null> {
  const [session] = await admitPendingSessions(client, { ...options, limit: 1 });
  return session ?? null;
}
