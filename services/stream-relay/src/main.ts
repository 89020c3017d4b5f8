import { busOptionsFromEnv, connectBus, createBusAdmin, provisionOnStart } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createMetrics } from "@tarsy/metrics";
import { natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { busEventLog } from "./bus-event-log.ts";
import { configEnv, loadEnv } from "./env.ts";
import { createProxyTrust } from "./proxy-trust.ts";
import { startRelay } from "./server.ts";

const env = loadEnv();
const logger = createLogger({ service: "stream-relay", level: env.LOG_LEVEL });

await runService(
  async () => {
    const { config, warnings } = loadConfig({ configDir: env.TARSY_CONFIG_DIR, env: configEnv() });
    logConfigWarnings(logger, warnings);
    // Postgres only while authorization is on (API tokens, each session's project); the
    // modules behind it are loaded only then, so the relay starts as fast as before when off.
    // The trusted-proxy rule applies either way.
    const db = config.authorization.enabled
      ? (await import("@tarsy/db")).createDb({
          url: env.DATABASE_URL,
          logger,
          poolSize: env.DATABASE_POOL_SIZE,
        })
      : null;
    const access = db
      ? await (await import("./relay-access.ts")).createRelayAccess(
          config.authorization,
          db.prisma,
          logger.child({ component: "access" }),
        )
      : null;
    const proxyTrust = createProxyTrust(config.authorization);
    const bus = await connectBus(
      busOptionsFromEnv(env, {
        name: "stream-relay",
        logger: logger.child({ component: "bus" }),
        streamMaxAgeMs: { events: config.system.retention.event_ttl_ms },
      }),
    );
    await provisionOnStart(createBusAdmin(bus), env);
    const relay = await startRelay(
      busEventLog(bus, logger.child({ component: "event-log" })),
      {
        host: env.RELAY_HOST,
        port: env.RELAY_PORT,
        allowedOrigins: env.RELAY_ALLOWED_ORIGINS,
        catchupLimit: env.RELAY_CATCHUP_LIMIT,
        maxSubscriptions: env.RELAY_MAX_SUBSCRIPTIONS,
        sendBufferLimitBytes: env.RELAY_SEND_BUFFER_LIMIT_BYTES,
        slowClientGraceMs: env.RELAY_SLOW_CLIENT_GRACE_MS,
        heartbeatMs: env.RELAY_HEARTBEAT_MS,
        maxFrameBytes: env.RELAY_MAX_FRAME_BYTES,
        controlRatePerSec: env.RELAY_CONTROL_RATE_PER_SEC,
        controlBurst: env.RELAY_CONTROL_BURST,
        controlViolationsBeforeClose: env.RELAY_CONTROL_VIOLATIONS_BEFORE_CLOSE,
        maxPendingCatchups: env.RELAY_MAX_PENDING_CATCHUPS,
        metrics: createMetrics("stream-relay"),
        ready: {
          nats: natsReadiness(bus),
          ...(db ? { postgres: () => db.ping() } : {}),
        },
        health: {
          nats: { check: natsReadiness(bus) },
          ...(db ? { database: { check: () => db.ping() } } : {}),
        },
        proxyTrust,
        ...(access ? { access } : {}),
      },
      logger.child({ component: "relay" }),
    );
    return {
      async stop() {
        await relay.close();
        await bus.drain();
        await db?.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
