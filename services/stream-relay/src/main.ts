import { busOptionsFromEnv, connectBus, createBusAdmin, provisionOnStart } from "@tarsy/bus";
import { createMetrics } from "@tarsy/metrics";
import { natsReadiness } from "@tarsy/metrics/bus";
import { createLogger, runService } from "@tarsy/runtime";
import { busEventLog } from "./bus-event-log.ts";
import { loadEnv } from "./env.ts";
import { startRelay } from "./server.ts";

const env = loadEnv();
const logger = createLogger({ service: "stream-relay", level: env.LOG_LEVEL });

await runService(
  async () => {
    const bus = await connectBus(
      busOptionsFromEnv(env, { name: "stream-relay", logger: logger.child({ component: "bus" }) }),
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
        ready: { nats: natsReadiness(bus) },
      },
      logger.child({ component: "relay" }),
    );
    return {
      async stop() {
        await relay.close();
        await bus.drain();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
