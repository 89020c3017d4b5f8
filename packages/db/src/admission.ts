/**
 * Admission: the global cap on concurrently running sessions and the fair choice among
 * pending ones. Admission passes are serialized by a transaction-level advisory lock, so N
 * orchestrator replicas together never exceed the cap; rows are claimed with FOR UPDATE SKIP
 * LOCKED so a session held by another handler (e.g. being cancelled) is skipped, not waited for.
 *
 * Fairness is across alert types: each free slot goes to the oldest pending session of the
 * alert type that has the fewest running sessions; among types with equally many, the type
 * admitted least recently (never admitted first), then the type whose oldest pending session
 * is oldest. Within a type, sessions start oldest first. So a storm of one type cannot starve
 * another: a type with nothing running is always served before a type with sessions running,
 * and two storming types alternate.
 */
import { RUNNING_SESSION_STATUSES } from "@tarsy/contracts";
import type { DbClient, Tx } from "./client.ts";
import { inTransaction } from "./client.ts";
import type { AlertSession } from "./generated/prisma/client.ts";

const ADMISSION_LOCK_KEY = 0x7a5_ad01;
/** Pending sessions locked by another handler that one pass steps over before giving up. */
const MAX_SKIPPED = 50;

export async function countRunningSessions(client: DbClient): Promise<number> {
  return client.alertSession.count({
    where: { status: { in: [...RUNNING_SESSION_STATUSES] }, deletedAt: null },
  });
}

/** Pending (not yet admitted) sessions of one alert type. */
export async function countPendingSessions(client: DbClient, alertType: string): Promise<number> {
  return client.alertSession.count({ where: { status: "pending", alertType, deletedAt: null } });
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
 * The next session to admit by the fairness rule (see the module comment), skipping `skip`.
 * Reads one head per alert type (index `alert_sessions_pending_by_type_idx`), so its cost
 * grows with the pending sessions' count only through that index scan.
 */
async function nextCandidate(tx: Tx, skip: readonly string[]): Promise<string | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH heads AS (
      SELECT DISTINCT ON (alert_type) id, alert_type, created_at
      FROM alert_sessions
      WHERE status = 'pending' AND deleted_at IS NULL
        AND NOT (id = ANY(${skip}::uuid[]))
      ORDER BY alert_type, created_at, id
    )
    SELECT h.id FROM heads h
    LEFT JOIN LATERAL (
      SELECT count(*) AS n FROM alert_sessions r
      WHERE r.alert_type = h.alert_type AND r.deleted_at IS NULL
        AND r.status IN ('in_progress', 'cancelling') -- wire-literal: RUNNING_SESSION_STATUSES, as the partial index alert_sessions_running_by_type_idx spells it
    ) running ON true
    LEFT JOIN LATERAL (
      SELECT max(started_at) AS at FROM alert_sessions a
      WHERE a.alert_type = h.alert_type AND a.started_at IS NOT NULL
    ) admitted ON true
    ORDER BY running.n, admitted.at ASC NULLS FIRST, h.created_at, h.id
    LIMIT 1`;
  return rows[0]?.id;
}

/** Locks a pending session for admission; false when another handler holds it or it moved on. */
async function lockPending(tx: Tx, id: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM alert_sessions
    WHERE id = ${id}::uuid AND status = 'pending' AND deleted_at IS NULL
    FOR UPDATE SKIP LOCKED`;
  return rows.length === 1;
}

/**
 * Moves pending sessions to in_progress while slots are free, one fair choice at a time, and
 * returns them in admission order. Sessions stay pending when the cap is reached.
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
    const ids: string[] = [];
    const skipped: string[] = [];
    while (ids.length < slots && skipped.length <= MAX_SKIPPED) {
      const id = await nextCandidate(tx, skipped);
      if (id === undefined) break;
      if (!(await lockPending(tx, id))) {
        skipped.push(id);
        continue;
      }
      const now = new Date();
      await tx.alertSession.updateMany({
        where: { id, status: "pending" },
        data: {
          status: "in_progress",
          podId: options.podId,
          startedAt: now,
          lastInteractionAt: now,
        },
      });
      ids.push(id);
    }
    if (ids.length === 0) return [];
    const admitted = await tx.alertSession.findMany({ where: { id: { in: ids } } });
    const order = new Map(ids.map((id, index) => [id, index]));
    return admitted.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  });
}
