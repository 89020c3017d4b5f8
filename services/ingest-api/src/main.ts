import { createLogger, runService } from "@tarsy/runtime";
import { loadEnv } from "./env.ts";

const env = loadEnv();
const logger = createLogger({ service: "ingest-api", level: env.LOG_LEVEL });

await runService(
  async () => {
    // Wired in full by the ingest-api capability; until then the process starts and stops cleanly.
    const keepAlive = setInterval(() => {}, 60_000);
    return {
      async stop() {
        clearInterval(keepAlive);
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
