import { busOptionsFromEnv, connectBus } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createMaskingService } from "@tarsy/masking";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
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
    const bus = await connectBus(busOptionsFromEnv(env, { name: "mcp-gateway", logger }));
    const gateway = await startGateway(
      { bus, masking, logger, metrics },
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
      },
    );
    ops.setReadiness({
      nats: natsReadiness(bus),
      mcp_servers: async () => {
        const readiness = gateway.health.readiness();
        if (!readiness.ready) throw new Error(readiness.reason ?? "MCP servers not initialized");
      },
    });
    return {
      async stop() {
        ops.markStopping();
        await gateway.stop();
        await bus.drain();
        await ops.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
