import { busOptionsFromEnv, connectBus, createBusAdmin, provisionOnStart } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { countRunningSessions, createDb } from "@tarsy/db";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { busMetricsObserver, collectWorkBacklog, natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { configEnv, loadEnv } from "./env.ts";
import { startOrchestrator } from "./orchestrator.ts";

const env = loadEnv();
const logger = createLogger({ service: "orchestrator", level: env.LOG_LEVEL });
const metrics = createMetrics("orchestrator");

await runService(
  async () => {
    const ops = await startOpsServer({
      host: env.METRICS_HOST,
      port: env.METRICS_PORT,
      registry: metrics.registry,
      logger: logger.child({ component: "ops" }),
    });
    const { config, warnings } = loadConfig({ configDir: env.TARSY_CONFIG_DIR, env: configEnv() });
    logConfigWarnings(logger, warnings);
    const db = createDb({ url: env.DATABASE_URL, logger: logger.child({ component: "db" }) });
    const bus = await connectBus(
      busOptionsFromEnv(env, {
        name: `orchestrator-${env.POD_ID}`,
        logger: logger.child({ component: "bus" }),
        observer: busMetricsObserver(metrics),
        streamMaxAgeMs: { events: config.system.retention.event_ttl_ms },
      }),
    );
    const admin = createBusAdmin(bus);
    await provisionOnStart(admin, env);
    ops.setReadiness({ nats: natsReadiness(bus), postgres: () => db.ping() });
    ops.setHealth({ nats: { check: natsReadiness(bus) }, database: { check: () => db.ping() } });
    const metricsLogger = logger.child({ component: "metrics" });
    metrics.collectOnScrape(
      "sessionsActive",
      async (gauge) => gauge.set(await countRunningSessions(db.prisma)),
      { logger: metricsLogger },
    );
    collectWorkBacklog(metrics, admin, "orchestrator", metricsLogger);
    const orchestrator = await startOrchestrator(
      { db: db.prisma, bus, config, logger, metrics },
      {
        podId: env.POD_ID,
        concurrency: env.ORCHESTRATOR_CONCURRENCY,
        sweepIntervalMs: env.ORCHESTRATOR_SWEEP_INTERVAL_MS,
        staleAfterMs: config.queue.orphan_threshold_ms,
        outboxIntervalMs: env.ORCHESTRATOR_OUTBOX_INTERVAL_MS,
        tokenJanitorIntervalMs: env.ORCHESTRATOR_TOKEN_JANITOR_INTERVAL_MS,
      },
    );
    return {
      async stop() {
        ops.markStopping();
        await orchestrator.stop();
        await bus.drain();
        await db.close();
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
