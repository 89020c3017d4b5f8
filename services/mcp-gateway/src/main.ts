import { createTokenSeal, parseSealKey } from "@tarsy/authz";
import { busOptionsFromEnv, connectBus } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createDb, type Db } from "@tarsy/db";
import { createMaskingService } from "@tarsy/masking";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { createStoredUserTokens } from "./auth/user-token-store.ts";
import { configEnv, loadEnv } from "./env.ts";
import { startGateway } from "./gateway.ts";

const env = loadEnv();
const logger = createLogger({ service: "mcp-gateway", level: env.LOG_LEVEL });
const metrics = createMetrics("mcp-gateway");

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
    const masking = createMaskingService({
      logger: logger.child({ component: "masking" }),
      onRedaction: (pattern, count) => metrics.maskingRedactions.inc({ pattern }, count),
    });
    const perUser = [...config.mcpServers.values()].filter((s) => s.auth.mode !== "shared");
    // Postgres holds action requests (mutating calls run only when approved there) and
    // per-user tokens.
    const db: Db | undefined = env.DATABASE_URL
      ? createDb({ url: env.DATABASE_URL, logger: logger.child({ component: "db" }) })
      : undefined;
    if (!db) {
      logger.warn(
        "DATABASE_URL is not set: every mutating tool call is refused (action requests live in Postgres)",
      );
    }
    if (perUser.length > 0 && !(db && env.TARSY_TOKEN_KEY)) {
      logger.warn(
        { servers: perUser.map((s) => s.id) },
        "MCP servers use per-user credentials but DATABASE_URL or TARSY_TOKEN_KEY is not set: their calls fail closed (or use shared credentials where fallback_to_shared)",
      );
    }
    const userTokens =
      db && env.TARSY_TOKEN_KEY && perUser.length > 0
        ? createStoredUserTokens(
            db.prisma,
            createTokenSeal(parseSealKey(env.TARSY_TOKEN_KEY ?? "")),
            logger.child({ component: "user-tokens" }),
          )
        : undefined;
    const bus = await connectBus(busOptionsFromEnv(env, { name: "mcp-gateway", logger }));
    const gateway = await startGateway(
      {
        bus,
        masking,
        logger,
        metrics,
        ...(userTokens ? { userTokens } : {}),
        ...(db ? { db } : {}),
      },
      {
        servers: config.mcpServers,
        timeouts: {
          initMs: env.MCP_INIT_TIMEOUT_MS,
          callMs: env.MCP_CALL_TIMEOUT_MS,
          listMs: env.MCP_LIST_TIMEOUT_MS,
          healthPingMs: env.MCP_HEALTH_PING_TIMEOUT_MS,
        },
        healthIntervalMs: env.MCP_HEALTH_INTERVAL_MS,
        idleTimeoutMs: env.MCP_SESSION_IDLE_TIMEOUT_MS,
        inheritedEnv: configEnv(),
        replicaId: env.MCP_GATEWAY_REPLICA_ID,
        warmPoolSize: env.MCP_WARM_POOL_SIZE,
      },
    );
    ops.setReadiness({
      nats: natsReadiness(bus),
      // Per-user credentials need Postgres for every call of their servers; action requests
      // only for mutating calls, which fail closed while it is down (not a reason to take the
      // replica out of service).
      ...(db && userTokens ? { postgres: () => (db as Db).ping() } : {}),
      mcp_servers: async () => {
        const readiness = gateway.health.readiness();
        if (!readiness.ready) throw new Error(readiness.reason ?? "MCP servers not initialized");
      },
    });
    ops.setHealth({
      nats: { check: natsReadiness(bus) },
      ...(db && userTokens ? { database: { check: () => (db as Db).ping() } } : {}),
    });
    return {
      async stop() {
        ops.markStopping();
        await gateway.stop();
        await bus.drain();
        await db?.close();
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
