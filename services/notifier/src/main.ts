import { busOptionsFromEnv, connectBus, createBusAdmin, provisionOnStart } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createDb } from "@tarsy/db";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { busMetricsObserver, natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { configEnv, loadEnv } from "./env.ts";
import { startNotifier } from "./notifier.ts";

const env = loadEnv();
const logger = createLogger({ service: "notifier", level: env.LOG_LEVEL });
const metrics = createMetrics("notifier");

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
        name: `notifier-${env.POD_ID}`,
        logger: logger.child({ component: "bus" }),
        observer: busMetricsObserver(metrics),
      }),
    );
    await provisionOnStart(createBusAdmin(bus), env);
    ops.setReadiness({ nats: natsReadiness(bus), postgres: () => db.ping() });
    ops.setHealth({ nats: { check: natsReadiness(bus) }, database: { check: () => db.ping() } });
    const notifier = await startNotifier(
      { db: db.prisma, bus, config, env: configEnv(), logger, metrics },
      {
        podId: env.POD_ID,
        concurrency: env.NOTIFIER_CONCURRENCY,
        leaseMs: env.NOTIFIER_LEASE_MS,
        maxAttempts: env.NOTIFIER_MAX_ATTEMPTS,
        retryInitialMs: env.NOTIFIER_RETRY_INITIAL_MS,
        retryMaxMs: env.NOTIFIER_RETRY_MAX_MS,
        sweepIntervalMs: env.NOTIFIER_SWEEP_INTERVAL_MS,
        requestTimeoutMs: env.NOTIFIER_REQUEST_TIMEOUT_MS,
      },
    );
    return {
      async stop() {
        ops.markStopping();
        await notifier.stop();
        await bus.drain();
        await db.close();
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
