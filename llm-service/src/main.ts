import { readFileSync } from "node:fs";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { createLogger, runService } from "@tarsy/runtime";
import { parseScript } from "./backends/script.ts";
import { credentialProblems } from "./credentials-check.ts";
import { configEnv, envSecretLookup, loadEnv } from "./env.ts";
import { createLlmServer } from "./server.ts";

const env = loadEnv();
const logger = createLogger({ service: "llm-service", level: env.LOG_LEVEL });
const metrics = createMetrics("llm-service");
const script = env.LLM_SCRIPT_PATH
  ? parseScript(readFileSync(env.LLM_SCRIPT_PATH, "utf8"), env.LLM_SCRIPT_PATH)
  : undefined;

await runService(
  async () => {
    if (env.LLM_SCRIPT_ALL_PROVIDERS && !script) {
      throw new Error("LLM_SCRIPT_ALL_PROVIDERS needs LLM_SCRIPT_PATH: the script to answer from");
    }
    if (env.LLM_SCRIPT_ALL_PROVIDERS) {
      logger.warn(
        { script: env.LLM_SCRIPT_PATH },
        "every LLM request is answered from the script, whatever its provider (no model is called)",
      );
    } else if (env.TARSY_CONFIG_DIR) {
      const problems = credentialProblems(env.TARSY_CONFIG_DIR, configEnv());
      if (problems.length > 0) {
        throw new Error(
          `LLM provider credentials missing in llm-service's environment:\n  ${problems.join("\n  ")}`,
        );
      }
    }
    const ops = await startOpsServer({
      host: env.METRICS_HOST,
      port: env.METRICS_PORT,
      registry: metrics.registry,
      logger: logger.child({ component: "ops" }),
    });
    const server = createLlmServer({
      logger,
      scriptAllProviders: env.LLM_SCRIPT_ALL_PROVIDERS,
      getSecret: envSecretLookup(),
      retry: {
        maxRetries: env.LLM_RETRY_MAX,
        baseDelayMs: env.LLM_RETRY_BASE_DELAY_MS,
        maxDelayMs: env.LLM_RETRY_MAX_DELAY_MS,
      },
      maxRequestBytes: env.LLM_MAX_REQUEST_BYTES,
      metrics,
      ...(script ? { script } : {}),
    });
    const port = await server.listen(env.LLM_SERVICE_HOST, env.LLM_SERVICE_PORT);
    logger.info({ host: env.LLM_SERVICE_HOST, port }, "llm-service listening");
    // Ready exactly when the gRPC health service says SERVING (the status clients see).
    const serving = async () => {
      const status = server.servingStatus();
      if (status !== "SERVING") throw new Error(`gRPC health is ${status}`);
    };
    ops.setReadiness({ grpc: serving });
    ops.setHealth({ grpc: { check: serving } });
    return {
      async stop() {
        ops.markStopping();
        await server.shutdown(env.SHUTDOWN_TIMEOUT_MS - 1000);
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
