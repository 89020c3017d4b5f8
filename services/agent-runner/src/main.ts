import { hostname } from "node:os";
import { busOptionsFromEnv, connectBus } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createDb } from "@tarsy/db";
import { createLlmClient } from "@tarsy/llm-client";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createLogger, runService } from "@tarsy/runtime";
import { configEnv, loadEnv } from "./env.ts";
import { createGatewayTools } from "./gateway.ts";
import { createPostgresStore } from "./store.ts";
import { startWorker } from "./worker.ts";

const env = loadEnv();
const logger = createLogger({ service: "agent-runner", level: env.LOG_LEVEL });

await runService(
  async () => {
    const { config, warnings } = loadConfig({ configDir: env.TARSY_CONFIG_DIR, env: configEnv() });
    for (const w of warnings) logger.warn({ file: w.file, path: w.path }, w.message);
    const runnerId = env.RUNNER_ID ?? `${hostname()}-${process.pid}`;
    const bus = await connectBus(
      busOptionsFromEnv(env, { name: `agent-runner-${runnerId}`, logger }),
    );
    if (env.RUNNER_PROVISION) await bus.provision();
    const db = createDb({ url: env.DATABASE_URL, logger });
    const llm = createLlmClient({ address: env.LLM_SERVICE_ADDRESS });
    const worker = await startWorker(
      {
        config,
        store: createPostgresStore(db),
        bus,
        llm,
        tools: createGatewayTools(createMcpGatewayClient(bus), logger),
        logger,
        runnerId,
      },
      { concurrency: env.RUNNER_CONCURRENCY, shutdownGraceMs: env.RUNNER_SHUTDOWN_GRACE_MS },
    );
    logger.info({ runner_id: runnerId, concurrency: env.RUNNER_CONCURRENCY }, "agent runner ready");
    return {
      async stop() {
        const report = await worker.stop();
        logger.info(report, "worker stopped");
        await bus.drain();
        llm.close();
        await db.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
