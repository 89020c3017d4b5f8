import type { DependencyHealth, HealthResponse } from "@tarsy/contracts";
import { pingDatabase } from "@tarsy/db";
import { configWarnings } from "./config-warnings.ts";
import type { IngestResources } from "./deps.ts";
import { withTimeout } from "./timeout.ts";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function timed(fn: () => Promise<DependencyHealth>): Promise<DependencyHealth> {
  const start = performance.now();
  try {
    const result = await fn();
    return { ...result, latency_ms: Math.round((performance.now() - start) * 10) / 10 };
  } catch (err) {
    return { status: "unhealthy", error: message(err) };
  }
}

/** Per-dependency health; `degraded` when any configured dependency is not healthy. */
export async function checkHealth(deps: IngestResources): Promise<HealthResponse> {
  const ms = deps.settings.dependencyTimeoutMs;
  const { gateway, llmHealth } = deps;
  const [postgres, nats, mcp, llm, warnings] = await Promise.all([
    timed(async () => {
      await withTimeout(pingDatabase(deps.prisma), ms, "postgres");
      return { status: "healthy" };
    }),
    timed(async () => {
      const h = await deps.bus.health(ms);
      return h.connected
        ? { status: "healthy", details: { server: h.server } }
        : { status: "unhealthy", error: h.error ?? "not connected" };
    }),
    gateway
      ? timed(async () => {
          const h = await withTimeout(gateway.health(), ms, "mcp-gateway health");
          const details = { healthy: h.healthy, servers: h.servers };
          return h.ready
            ? { status: "healthy", details }
            : { status: "not_ready", error: h.not_ready_reason ?? "not ready", details };
        })
      : Promise.resolve<DependencyHealth>({ status: "not_configured" }),
    llmHealth
      ? timed(async () => {
          const status = await withTimeout(llmHealth(), ms, "llm-service health");
          return status === "SERVING"
            ? { status: "healthy" }
            : { status: "unhealthy", error: `llm-service reports ${status}` };
        })
      : Promise.resolve<DependencyHealth>({ status: "not_configured" }),
    gateway
      ? withTimeout(gateway.warnings(), ms, "mcp-gateway warnings").then(
          (r) => r.warnings,
          () => [],
        )
      : Promise.resolve([]),
  ]);
  const checks = { database: postgres, postgres, nats, mcp_gateway: mcp, llm_service: llm };
  const ok = Object.values(checks).every(
    (c) => c.status === "healthy" || c.status === "not_configured",
  );
  return {
    status: ok ? "healthy" : "degraded",
    version: deps.settings.version,
    checks,
    configuration: {
      agents: deps.config.agents.size,
      chains: deps.config.chains.size,
      mcp_servers: deps.config.mcpServers.size,
      llm_providers: deps.config.llmProviders.size,
    },
    warnings: [...configWarnings(deps), ...warnings],
  };
}
