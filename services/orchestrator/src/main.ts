import { busOptionsFromEnv, connectBus } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createDb } from "@tarsy/db";
import { createLogger, runService } from "@tarsy/runtime";
import { loadEnv } from "./env.ts";
import { startOrchestrator } from "./orchestrator.ts";

const env = loadEnv();
const logger = createLogger({ service: "orchestrator", level: env.LOG_LEVEL });

await runService(
  async () => {
    const { config, warnings } = loadConfig({ configDir: env.TARSY_CONFIG_DIR, env: process.env });
    for (const warning of warnings) logger.warn({ warning }, "configuration warning");
    const db = createDb({ url: env.DATABASE_URL, logger: logger.child({ component: "db" }) });
    const bus = await connectBus(
      busOptionsFromEnv(env, {
        name: `orchestrator-${env.POD_ID}`,
        logger: logger.child({ component: "bus" }),
      }),
    );
    await bus.provision();
    const orchestrator = await startOrchestrator(
      { db: db.prisma, bus, config, logger },
      {
        podId: env.POD_ID,
        concurrency: env.ORCHESTRATOR_CONCURRENCY,
        sweepIntervalMs: env.ORCHESTRATOR_SWEEP_INTERVAL_MS,
        staleAfterMs: config.queue.orphan_threshold_ms,
        outboxIntervalMs: env.ORCHESTRATOR_OUTBOX_INTERVAL_MS,
      },
    );
    return {
      async stop() {
        await orchestrator.stop();
        await bus.drain();
        await db.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
