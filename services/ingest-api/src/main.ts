import type { AddressInfo } from "node:net";
import { createTokenSeal, parseSealKey } from "@tarsy/authz";
import { busOptionsFromEnv, connectBus, createBusAdmin, provisionOnStart } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import { createDb } from "@tarsy/db";
import { createLlmClient } from "@tarsy/llm-client";
import { createMaskingService } from "@tarsy/masking";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createMetrics } from "@tarsy/metrics";
import { busMetricsObserver, natsReadiness } from "@tarsy/metrics/bus";
import { createRunbookClient, runbookSettingsFromConfig } from "@tarsy/runbooks";
import { createLogger, logConfigWarnings, runService } from "@tarsy/runtime";
import { createAccessControl } from "./access.ts";
import { createApp } from "./app.ts";
import { receiverStartWarning } from "./authz/receiver.ts";
import { startBackgroundRelay } from "./delivery.ts";
import type { AlertmanagerAuth, IngestResources } from "./deps.ts";
import { DEFAULT_SETTINGS } from "./deps.ts";
import { configEnv, type Env, loadEnv } from "./env.ts";
import { createHttpServer } from "./http-server.ts";
import { warnWithoutTokenKey } from "./user-token.ts";

const env = loadEnv();
const logger = createLogger({ service: "ingest-api", level: env.LOG_LEVEL });
const metrics = createMetrics("ingest-api");

function alertmanagerAuth(e: Env): AlertmanagerAuth {
  if (e.ALERTMANAGER_BEARER_TOKEN) return { kind: "bearer", token: e.ALERTMANAGER_BEARER_TOKEN };
  if (e.ALERTMANAGER_BASIC_USER && e.ALERTMANAGER_BASIC_PASSWORD) {
    return {
      kind: "basic",
      username: e.ALERTMANAGER_BASIC_USER,
      password: e.ALERTMANAGER_BASIC_PASSWORD,
    };
  }
  return { kind: "none" };
}

await runService(
  async () => {
    const { config, warnings } = loadConfig({ configDir: env.TARSY_CONFIG_DIR, env: configEnv() });
    logConfigWarnings(logger, warnings);
    const db = createDb({ url: env.DATABASE_URL, logger, poolSize: env.DATABASE_POOL_SIZE });
    const bus = await connectBus(
      busOptionsFromEnv(env, {
        name: "ingest-api",
        logger,
        observer: busMetricsObserver(metrics),
        streamMaxAgeMs: { events: config.system.retention.event_ttl_ms },
      }),
    );
    await provisionOnStart(createBusAdmin(bus), env);
    const llm = env.LLM_SERVICE_ADDRESS
      ? createLlmClient({ address: env.LLM_SERVICE_ADDRESS })
      : undefined;
    const settings = {
      ...DEFAULT_SETTINGS,
      maxAlertBytes: env.MAX_ALERT_BYTES,
      maxJsonDepth: env.MAX_JSON_DEPTH,
      publishTimeoutMs: env.PUBLISH_TIMEOUT_MS,
      dependencyTimeoutMs: env.DEPENDENCY_TIMEOUT_MS,
      alertmanager: {
        dedupeWindowMs: env.ALERTMANAGER_DEDUPE_WINDOW,
        alertTypeLabel: env.ALERTMANAGER_ALERT_TYPE_LABEL,
        mode: env.ALERTMANAGER_MODE,
        auth: alertmanagerAuth(env),
        maxAlerts: env.ALERTMANAGER_MAX_ALERTS,
        runbookAnnotation: env.ALERTMANAGER_RUNBOOK_ANNOTATION,
      },
      ...(env.DASHBOARD_DIR ? { staticDir: env.DASHBOARD_DIR } : {}),
      ...(env.TARSY_WS_URL ? { wsUrl: env.TARSY_WS_URL } : {}),
    };
    const deps: IngestResources = {
      prisma: db.prisma,
      bus,
      config,
      masking: createMaskingService({
        logger: logger.child({ component: "masking" }),
        onRedaction: (pattern, count) => metrics.maskingRedactions.inc({ pattern }, count),
      }),
      runbooks: createRunbookClient(runbookSettingsFromConfig(config.system, configEnv()), {
        onSkipped: (path, err) =>
          logger.warn({ err, path }, "runbook listing: a directory could not be read; skipped"),
      }),
      gateway: createMcpGatewayClient(bus, { shortTimeoutMs: env.DEPENDENCY_TIMEOUT_MS }),
      ...(llm ? { llmHealth: () => llm.health() } : {}),
      logger,
      settings,
      metrics,
      ready: { nats: natsReadiness(bus), postgres: () => db.ping() },
      access: await createAccessControl(config.authorization, db.prisma),
      ...(env.TARSY_TOKEN_KEY
        ? { tokenSeal: createTokenSeal(parseSealKey(env.TARSY_TOKEN_KEY)) }
        : {}),
    };
    warnWithoutTokenKey(deps, logger);
    const receiverWarning = receiverStartWarning(deps);
    if (receiverWarning) {
      logger.warn({ path: "authorization.alertmanager" }, receiverWarning);
    }
    const relay = startBackgroundRelay(deps, env.OUTBOX_RELAY_INTERVAL_MS);
    const server = createHttpServer({
      fetch: createApp(deps).fetch,
      logger,
      maxHeaderBytes: env.MAX_HEADER_BYTES,
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(env.PORT, env.HOST, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    logger.info({ host: env.HOST, port }, "http server listening");
    return {
      async stop() {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await relay.stop();
        llm?.close();
        await bus.drain();
        await db.close();
      },
    };
  },
  { logger, shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS },
);
