import { hostname } from "node:os";
import {
  busOptionsFromEnv,
  connectBus,
  createBusAdmin,
  outboxPublisher,
  provisionOnStart,
} from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createCostEstimator } from "@tarsy/cost";
import { createDb } from "@tarsy/db";
import { createLlmClient } from "@tarsy/llm-client";
import { createMaskingService } from "@tarsy/masking";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { busMetricsObserver, collectWorkBacklog, natsReadiness } from "@tarsy/metrics/bus";
import { createRunbookClient, runbookSettingsFromConfig } from "@tarsy/runbooks";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { configEnv, llmRetryPolicy, loadEnv } from "./env.ts";
import { createGatewayTools } from "./gateway.ts";
import { llmReadiness } from "./llm-readiness.ts";
import { createPostgresStore } from "./store.ts";
import { startWorker } from "./worker.ts";

const env = loadEnv();
const logger = createLogger({ service: "agent-runner", level: env.LOG_LEVEL });
const metrics = createMetrics("agent-runner");

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
    const runnerId = env.RUNNER_ID ?? `${hostname()}-${process.pid}`;
    const bus = await connectBus(
      busOptionsFromEnv(env, {
        name: `agent-runner-${runnerId}`,
        logger,
        observer: busMetricsObserver(metrics),
        streamMaxAgeMs: { events: config.system.retention.event_ttl_ms },
      }),
    );
    const admin = createBusAdmin(bus);
    await provisionOnStart(admin, env);
    const db = createDb({ url: env.DATABASE_URL, logger });
    const llm = createLlmClient({ address: env.LLM_SERVICE_ADDRESS });
    ops.setReadiness({
      nats: natsReadiness(bus),
      postgres: () => db.ping(),
      "llm-service": llmReadiness(llm, env.LLM_HEALTH_TIMEOUT_MS),
    });
    collectWorkBacklog(metrics, admin, "runner", logger.child({ component: "metrics" }));
    const worker = await startWorker(
      {
        config,
        store: createPostgresStore(
          db,
          createCostEstimator(config.system.cost_estimation),
          outboxPublisher(bus),
        ),
        bus,
        llm,
        embedder: llm,
        llmRetry: llmRetryPolicy(env),
        tools: createGatewayTools(createMcpGatewayClient(bus), logger),
        runbooks: createRunbookClient(runbookSettingsFromConfig(config.system, configEnv())),
        masking: createMaskingService({ logger: logger.child({ component: "masking" }) }),
        logger,
        runnerId,
        metrics,
        ...(env.RUNNER_PROMPT_TIME
          ? { now: () => new Date(env.RUNNER_PROMPT_TIME as string) }
          : {}),
      },
      { concurrency: env.RUNNER_CONCURRENCY, shutdownGraceMs: env.RUNNER_SHUTDOWN_GRACE_MS },
    );
    ops.setHealth({
      nats: { check: natsReadiness(bus) },
      database: { check: () => db.ping() },
      // The pool of executions this process runs at once: how full it is.
      worker_pool: {
        check: async () => ({ active: worker.active(), capacity: env.RUNNER_CONCURRENCY }),
        impact: "degraded",
      },
    });
    logger.info({ runner_id: runnerId, concurrency: env.RUNNER_CONCURRENCY }, "agent runner ready");
    return {
      async stop() {
        ops.markStopping();
        const report = await worker.stop();
        logger.info(report, "worker stopped");
        await bus.drain();
        llm.close();
        await db.close();
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
