import { type Bus, type ConsumeOptions, outboxPublisher, type WorkConsumer } from "@tarsy/bus";
import type { TarsyConfig } from "@tarsy/config";
import {
  findStaleRunningSessions,
  type OutboxRelay,
  type PrismaClient,
  startOutboxRelay,
} from "@tarsy/db";
import { createMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { type RetentionJob, type RetentionMetricSet, startRetentionJob } from "./retention-job.ts";
import { decideOverdueActions } from "./saga/actions.ts";
import { admitAndStart, startSession } from "./saga/admission.ts";
import type { SagaDeps } from "./saga/deps.ts";
import { orchestratorHandlers } from "./saga/handlers.ts";
import { type SagaMetricSet, sagaMetrics } from "./saga/metrics.ts";
import { dropOrphans } from "./saga/orphans.ts";
import {
  startTokenJanitor,
  type TokenJanitor,
  type TokenJanitorMetricSet,
} from "./token-janitor.ts";

export interface OrchestratorOptions {
  podId: string;
  /** Work messages handled at once by this replica. */
  concurrency: number;
  /** How often to admit waiting sessions and re-step sessions that stopped moving. */
  sweepIntervalMs: number;
  /** A running session untouched for this long is stepped again by the sweep. */
  staleAfterMs: number;
  outboxIntervalMs: number;
  /** How often expired user tokens are wiped (default 60 s). */
  tokenJanitorIntervalMs?: number;
  /** How often the retention job runs (default `system.retention.cleanup_interval_ms`). */
  retentionIntervalMs?: number;
  consume?: ConsumeOptions<"orchestrator">;
}

export interface Orchestrator {
  /** One sweep now (admission + recovery); also runs on its interval. */
  sweep(): Promise<void>;
  readonly tokenJanitor: TokenJanitor;
  readonly retention: RetentionJob;
  stop(): Promise<void>;
}

export interface OrchestratorResources {
  db: PrismaClient;
  bus: Bus;
  config: TarsyConfig;
  logger: Logger;
  /** Default: a registry of its own that nobody scrapes (tests). */
  metrics?: OrchestratorMetricSet;
}

/** The metrics the orchestrator records: the saga's, the token janitor's and retention's. */
export type OrchestratorMetricSet = SagaMetricSet & TokenJanitorMetricSet & RetentionMetricSet;

export async function startOrchestrator(
  resources: OrchestratorResources,
  options: OrchestratorOptions,
): Promise<Orchestrator> {
  const { db, bus, config, logger } = resources;
  const metrics = resources.metrics ?? createMetrics("orchestrator", { processMetrics: false });
  const relay: OutboxRelay = startOutboxRelay(db, outboxPublisher(bus), {
    intervalMs: options.outboxIntervalMs,
    logger: logger.child({ component: "outbox" }),
  });
  const deps: SagaDeps = {
    db,
    bus,
    config,
    logger,
    podId: options.podId,
    flushOutbox: () => relay.kick(),
    now: () => new Date(),
    metrics: sagaMetrics(metrics),
  };

  let sweeping: Promise<void> | null = null;
  const sweep = (): Promise<void> => {
    sweeping ??= (async () => {
      try {
        await admitAndStart(deps);
        const stale = await findStaleRunningSessions(
          db,
          new Date(Date.now() - options.staleAfterMs),
          100,
        );
        for (const id of stale) await startSession(deps, id);
        await decideOverdueActions(deps);
      } catch (err) {
        logger.error({ err }, "sweep failed");
      } finally {
        sweeping = null;
      }
    })();
    return sweeping;
  };
  const timer = setInterval(() => void sweep(), options.sweepIntervalMs);
  timer.unref();
  const tokenJanitor = startTokenJanitor(db, {
    intervalMs: options.tokenJanitorIntervalMs ?? 60_000,
    logger: logger.child({ component: "token-janitor" }),
    metrics,
  });
  const retention = startRetentionJob(db, {
    retention: config.system.retention,
    logger: logger.child({ component: "retention" }),
    metrics,
    flushOutbox: () => relay.kick(),
    ...(options.retentionIntervalMs === undefined
      ? {}
      : { intervalMs: options.retentionIntervalMs }),
  });

  const consumer: WorkConsumer = await bus.consume("orchestrator", orchestratorHandlers(deps), {
    concurrency: options.concurrency,
    // A message about something that does not exist (a session withdrawn by ingest-api after
    // a failed publish, or deleted; an unknown execution, stage or chat message).
    drop: dropOrphans(deps),
    ...options.consume,
  });
  logger.info(
    { pod_id: options.podId, concurrency: options.concurrency },
    "orchestrator consuming",
  );

  return {
    sweep,
    tokenJanitor,
    retention,
    async stop() {
      clearInterval(timer);
      await tokenJanitor.stop();
      await retention.stop();
      await consumer.stop();
      await sweeping;
      await relay.stop();
    },
  };
}
