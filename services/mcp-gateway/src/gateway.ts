import { type Bus, outboxPublisher, type RpcService } from "@tarsy/bus";
import type { McpServerConfig } from "@tarsy/config";
import type { McpReplicaRef } from "@tarsy/contracts";
import type { Db } from "@tarsy/db";
import type { MaskingService } from "@tarsy/masking";
import { createMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { createActionLedger } from "./action-ledger.ts";
import { createGatewayHandlers } from "./api/handlers.ts";
import { replicaRef } from "./api/replica.ts";
import { startGatewayService } from "./api/service.ts";
import { CallAuth, type UserTokenLookup } from "./auth/credentials.ts";
import { TokenExchanger } from "./auth/token-exchange.ts";
import type { McpMetrics } from "./call-metrics.ts";
import { ExecutionRegistry } from "./client/execution-registry.ts";
import { WarmPool } from "./client/warm-pool.ts";
import { HealthMonitor } from "./health.ts";
import type { McpTimeouts } from "./timeouts.ts";
import { ToolExecutor } from "./tool-executor.ts";
import { SystemWarnings } from "./warnings.ts";

/** What main builds for the gateway: connections and shared services. */
export interface GatewayResources {
  bus: Bus;
  masking: MaskingService;
  logger: Logger;
  /** Default: a registry of its own that nobody scrapes (tests). */
  metrics?: McpMetrics;
  /**
   * The user token of an execution, for servers in a per-user `auth.mode`. Without it such
   * servers fail closed (or fall back to shared credentials where configured).
   */
  userTokens?: UserTokenLookup;
  /**
   * Postgres, for action requests: an action agent's mutating call runs only once its
   * approved request is claimed there. Without it every mutating call is refused.
   */
  db?: Db;
}

export interface GatewayOptions {
  servers: ReadonlyMap<string, McpServerConfig>;
  timeouts: McpTimeouts;
  healthIntervalMs: number;
  idleTimeoutMs: number;
  inheritedEnv: Readonly<Record<string, string | undefined>>;
  replicaId?: string | undefined;
  /** Warm sessions per server that does not set `warm_pool` (default 0: none). */
  warmPoolSize?: number;
}

export interface Gateway {
  readonly replica: McpReplicaRef;
  readonly health: HealthMonitor;
  readonly executions: ExecutionRegistry;
  readonly pool: WarmPool;
  readonly warnings: SystemWarnings;
  readonly service: RpcService;
  /** Stops taking requests, lets those in flight finish, closes every MCP session. */
  stop(): Promise<void>;
}

/**
 * Starts one gateway replica: the health monitor's first check of every server (readiness),
 * then the NATS service. Requests are served even before every server is up; the health
 * reply says which are not.
 */
export async function startGateway(
  resources: GatewayResources,
  options: GatewayOptions,
): Promise<Gateway> {
  const replica = replicaRef(options.replicaId);
  const logger = resources.logger.child({ replica: replica.id });
  // A server with `enabled: false` is never started, health-checked or offered.
  const servers = new Map([...options.servers].filter(([, s]) => s.enabled !== false));
  const disabled = [...options.servers.values()].filter((s) => s.enabled === false);
  if (disabled.length > 0)
    logger.info({ servers: disabled.map((s) => s.id) }, "MCP servers disabled in config");
  const sessionDeps = {
    servers,
    initTimeoutMs: options.timeouts.initMs,
    inheritedEnv: options.inheritedEnv,
  };
  const warnings = new SystemWarnings();
  const health = new HealthMonitor({
    deps: sessionDeps,
    warnings,
    logger: logger.child({ component: "mcp-health" }),
    intervalMs: options.healthIntervalMs,
    pingTimeoutMs: options.timeouts.healthPingMs,
  });
  const metrics = resources.metrics ?? createMetrics("mcp-gateway", { processMetrics: false });
  const pool = new WarmPool({
    servers,
    inheritedEnv: options.inheritedEnv,
    initTimeoutMs: options.timeouts.initMs,
    defaultSize: options.warmPoolSize ?? 0,
    logger: logger.child({ component: "warm-pool" }),
    onTake: (server, result) => metrics.mcpWarmPoolTakes.inc({ server, result }),
  });
  const executions = new ExecutionRegistry({
    deps: { ...sessionDeps, pool },
    idleTimeoutMs: options.idleTimeoutMs,
    logger: logger.child({ component: "executions" }),
  });
  const executor = new ToolExecutor({
    servers,
    masking: resources.masking,
    timeouts: options.timeouts,
    logger: logger.child({ component: "tool-executor" }),
    metrics,
    toolNames: (server) => health.toolNames(server),
    ...(resources.db && {
      actions: createActionLedger(
        resources.db,
        outboxPublisher(resources.bus),
        replica.id,
        logger.child({ component: "actions" }),
      ),
    }),
    auth: new CallAuth({
      userTokens: resources.userTokens,
      exchanger: new TokenExchanger({ env: options.inheritedEnv }),
      logger: logger.child({ component: "call-auth" }),
    }),
  });
  await health.start();
  const readiness = health.readiness();
  if (readiness.ready) logger.info({ servers: servers.size }, "every MCP server initialized");
  else logger.error({ reason: readiness.reason }, "not ready");
  const handlers = createGatewayHandlers({ replica, executions, executor, health, warnings });
  const service = await startGatewayService(resources.bus, replica, handlers);
  logger.info({ subject_prefix: replica.subject_prefix }, "mcp-gateway serving");
  // Warm sessions start once the gateway serves, beside the first requests rather than before.
  pool.start();
  if (Object.keys(pool.sizes()).length > 0) logger.info({ sizes: pool.sizes() }, "warm MCP pools");
  return {
    replica,
    health,
    executions,
    pool,
    warnings,
    service,
    async stop() {
      await service.stop();
      await Promise.all([executions.closeAll(), health.stop(), pool.close()]);
    },
  };
}
