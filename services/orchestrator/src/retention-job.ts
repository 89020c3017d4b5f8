import type { RetentionConfig } from "@tarsy/config";
import { type OutboxEntry, type PrismaClient, type RetentionRun, runRetention } from "@tarsy/db";
import type { ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";

/** The retention job's counters. */
export type RetentionMetricSet = Pick<
  ServiceMetrics<"orchestrator">,
  "retentionRuns" | "retentionSessionsDeleted" | "retentionOutboxPurged"
>;

/** Published outbox rows are kept this long (for diagnosis) before the job purges them. */
export const OUTBOX_KEEP_MS = 86_400_000;

export interface RetentionJob {
  /** One run now (skipped when another replica holds the lock); also runs on its interval. */
  run(): Promise<RetentionRun | null>;
  stop(): Promise<void>;
}

export interface RetentionJobOptions {
  readonly retention: RetentionConfig;
  readonly logger: Logger;
  readonly metrics: RetentionMetricSet;
  /** Relays the `session.deleted` messages a batch wrote (after its commit). */
  readonly flushOutbox?: (entries: OutboxEntry<"sessionDeleted">[]) => Promise<void>;
  /** Rows per transaction (default 500). */
  readonly batchSize?: number;
  /** Default `retention.cleanup_interval_ms`. */
  readonly intervalMs?: number;
  readonly now?: () => Date;
}

/**
 * Runs the retention cleanup every `cleanup_interval_ms` (and once at start): sessions that
 * ended more than `session_retention_days` ago are soft-deleted, those soft-deleted more than
 * `hard_delete_after_ms` ago are erased, published outbox rows older than a day are purged.
 * One replica runs at a time (an advisory lock); the others skip the round.
 */
export function startRetentionJob(db: PrismaClient, options: RetentionJobOptions): RetentionJob {
  const { retention, logger, metrics } = options;
  const now = options.now ?? (() => new Date());
  for (const outcome of ["ran", "skipped", "failed"]) metrics.retentionRuns.inc({ outcome }, 0);
  for (const phase of ["soft", "hard"]) metrics.retentionSessionsDeleted.inc({ phase }, 0);
  metrics.retentionOutboxPurged.inc(0);
  let running: Promise<RetentionRun | null> | null = null;
  const run = (): Promise<RetentionRun | null> => {
    running ??= (async () => {
      const at = now().getTime();
      try {
        const result = await runRetention(
          db,
          {
            softDeleteBefore: new Date(at - retention.session_retention_days * 86_400_000),
            hardDeleteBefore: new Date(at - retention.hard_delete_after_ms),
            outboxPublishedBefore: new Date(at - OUTBOX_KEEP_MS),
          },
          {
            ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
            onSoftDeleted: async (entries) => {
              try {
                await options.flushOutbox?.(entries);
              } catch (err) {
                logger.warn({ err }, "relaying session.deleted failed; the outbox relay retries");
              }
            },
          },
        );
        if (!result.ran) {
          metrics.retentionRuns.inc({ outcome: "skipped" });
          logger.debug("retention skipped: another replica is running it");
          return result;
        }
        metrics.retentionRuns.inc({ outcome: "ran" });
        metrics.retentionSessionsDeleted.inc({ phase: "soft" }, result.softDeleted);
        metrics.retentionSessionsDeleted.inc({ phase: "hard" }, result.hardDeleted);
        metrics.retentionOutboxPurged.inc(result.outboxPurged);
        logger.info(
          {
            soft_deleted: result.softDeleted,
            hard_deleted: result.hardDeleted,
            outbox_purged: result.outboxPurged,
            duration_ms: now().getTime() - at,
          },
          "retention run",
        );
        return result;
      } catch (err) {
        metrics.retentionRuns.inc({ outcome: "failed" });
        logger.error({ err }, "retention run failed");
        return null;
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void run(), options.intervalMs ?? retention.cleanup_interval_ms);
  timer.unref();
  const first = setTimeout(() => void run(), 0);
  first.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
