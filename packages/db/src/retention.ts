/**
 * Retention: soft-deleting sessions that ended long ago (each with its `sessionDeleted`
 * outbox message), erasing sessions soft-deleted past their grace period with every
 * dependent row (the foreign keys cascade from alert_sessions), and purging published outbox
 * rows. One run at a time across replicas (`runRetention`), in batches so a large backlog
 * never holds one long transaction.
 */
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { type DbClient, inTransaction, type PrismaClient } from "./client.ts";
import { enqueueOutbox, type OutboxEntry } from "./outbox.ts";
import { WIPED_USER_TOKEN } from "./user-tokens.ts";

/** The advisory lock one retention run holds; replicas that cannot take it skip the round. */
export const RETENTION_LOCK_KEY = 0x7a5_0de1;

const DEFAULT_BATCH = 500;

/**
 * Soft-deletes up to `limit` terminal sessions that completed before `cutoff`, with a
 * `sessionDeleted` outbox message each, in one transaction. Active sessions are never
 * touched, whatever their age. Returns the messages written.
 */
export function softDeleteSessionsBefore(
  client: DbClient,
  cutoff: Date,
  limit = DEFAULT_BATCH,
): Promise<OutboxEntry<"sessionDeleted">[]> {
  return inTransaction(client, async (tx) => {
    const rows = await tx.alertSession.findMany({
      where: {
        deletedAt: null,
        status: { in: [...TERMINAL_SESSION_STATUSES] },
        completedAt: { lt: cutoff },
      },
      select: { id: true },
      orderBy: { completedAt: "asc" },
      take: limit,
    });
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const now = new Date();
    // The status is checked again under the update, so a row changed meanwhile stays.
    await tx.alertSession.updateMany({
      where: { id: { in: ids }, deletedAt: null, status: { in: [...TERMINAL_SESSION_STATUSES] } },
      data: { deletedAt: now, ...WIPED_USER_TOKEN },
    });
    const deleted = await tx.alertSession.findMany({
      where: { id: { in: ids }, deletedAt: now },
      select: { id: true },
    });
    const entries: OutboxEntry<"sessionDeleted">[] = [];
    for (const { id } of deleted) {
      entries.push(
        await enqueueOutbox(tx, "sessionDeleted", {
          v: 1,
          type: "session.deleted",
          session_id: id,
          timestamp: now.toISOString(),
        }),
      );
    }
    return entries;
  });
}

/**
 * Erases up to `limit` sessions soft-deleted before `cutoff` with every dependent row
 * (stages, executions, timeline, messages, interactions, chats, notification deliveries:
 * all cascade). The audit log keeps its rows: it records who did what, not session data.
 * Returns how many sessions were erased.
 */
export async function hardDeleteSessionsBefore(
  client: DbClient,
  cutoff: Date,
  limit = DEFAULT_BATCH,
): Promise<number> {
  return client.$executeRaw`
    DELETE FROM alert_sessions WHERE id IN (
      SELECT id FROM alert_sessions WHERE deleted_at < ${cutoff}
      ORDER BY deleted_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`;
}

/** Deletes up to `limit` outbox rows published before `olderThan`. Returns how many. */
export async function purgePublishedOutboxBatch(
  client: DbClient,
  olderThan: Date,
  limit = DEFAULT_BATCH,
): Promise<number> {
  return client.$executeRaw`
    DELETE FROM outbox_messages WHERE id IN (
      SELECT id FROM outbox_messages WHERE published_at < ${olderThan}
      ORDER BY id LIMIT ${limit})`;
}

export interface RetentionCutoffs {
  /** Terminal sessions completed before this are soft-deleted. */
  readonly softDeleteBefore: Date;
  /** Sessions soft-deleted before this are erased. */
  readonly hardDeleteBefore: Date;
  /** Outbox rows published before this are purged. */
  readonly outboxPublishedBefore: Date;
}

export interface RetentionCounts {
  readonly softDeleted: number;
  readonly hardDeleted: number;
  readonly outboxPurged: number;
}

export type RetentionRun =
  | ({ readonly ran: true } & RetentionCounts)
  | { readonly ran: false; readonly reason: "locked" };

export interface RetentionRunOptions {
  /** Rows per transaction (default 500). */
  readonly batchSize?: number;
  /** Called after each soft-delete batch commits, with its messages (e.g. to relay the outbox). */
  readonly onSoftDeleted?: (entries: OutboxEntry<"sessionDeleted">[]) => Promise<void>;
  /** Longest a run may hold the lock, ms (default 1 h). */
  readonly maxRunMs?: number;
}

/**
 * One retention run: soft-delete, hard-delete, outbox purge, each in batches of their own
 * transactions. The run holds a transaction-level advisory lock on a connection of its own
 * for its whole length; a replica that cannot take it returns `{ ran: false }` at once.
 */
export async function runRetention(
  prisma: PrismaClient,
  cutoffs: RetentionCutoffs,
  options: RetentionRunOptions = {},
): Promise<RetentionRun> {
  const batch = options.batchSize ?? DEFAULT_BATCH;
  const maxRunMs = options.maxRunMs ?? 3_600_000;
  return prisma.$transaction(
    async (lock) => {
      const [row] = await lock.$queryRaw<{ locked: boolean }[]>`
        SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK_KEY}) AS locked`;
      if (row?.locked !== true) return { ran: false, reason: "locked" } as const;
      let softDeleted = 0;
      for (;;) {
        const entries = await softDeleteSessionsBefore(prisma, cutoffs.softDeleteBefore, batch);
        softDeleted += entries.length;
        if (entries.length > 0) await options.onSoftDeleted?.(entries);
        if (entries.length < batch) break;
      }
      let hardDeleted = 0;
      for (;;) {
        const n = await hardDeleteSessionsBefore(prisma, cutoffs.hardDeleteBefore, batch);
        hardDeleted += n;
        if (n < batch) break;
      }
      let outboxPurged = 0;
      for (;;) {
        const n = await purgePublishedOutboxBatch(prisma, cutoffs.outboxPublishedBefore, batch);
        outboxPurged += n;
        if (n < batch) break;
      }
      return { ran: true, softDeleted, hardDeleted, outboxPurged } as const;
    },
    { timeout: maxRunMs, maxWait: 10_000 },
  );
}
