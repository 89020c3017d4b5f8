import { configView, listAlertTypes } from "@tarsy/config";
import type { AlertTypesResponse, McpServersResponse } from "@tarsy/contracts";
import { Hono } from "hono";
import { configWarnings } from "../config-warnings.ts";
import { defaultTools } from "../default-tools.ts";
import type { IngestResources } from "../deps.ts";
import { unavailable } from "../errors.ts";
import { withTimeout } from "../timeout.ts";

/**
 * `/api/v1/system/*`: warnings, MCP servers and their tools, alert types and chains, and the
 * resolved configuration without secrets.
 */
export function systemRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const ms = deps.settings.dependencyTimeoutMs;

  app.get("/warnings", async (c) => {
    const own = configWarnings(deps);
    if (!deps.gateway) return c.json({ warnings: own });
    try {
      const reply = await withTimeout(deps.gateway.warnings(), ms, "mcp-gateway warnings");
      return c.json({ warnings: [...own, ...reply.warnings] });
    } catch (err) {
      throw unavailable(`mcp-gateway did not answer: ${(err as Error).message}`, err);
    }
  });

  app.get("/mcp-servers", async (c) => {
    const configured = [...deps.config.mcpServers.values()];
    let live = new Map<
      string,
      { healthy: boolean; tools: McpServersResponse["servers"][number]["tools"] }
    >();
    let gatewayError: string | undefined;
    if (deps.gateway) {
      try {
        const reply = await withTimeout(deps.gateway.serverTools(), ms, "mcp-gateway tools");
        live = new Map(
          reply.servers.map((s) => [
            s.server,
            {
              healthy: s.healthy,
              tools: s.tools.map((t) => ({
                name: t.tool,
                description: t.description,
                mutating: t.mutating,
                mutating_source: t.mutating_source,
              })),
            },
          ]),
        );
      } catch (err) {
        gatewayError = (err as Error).message;
      }
    } else {
      gatewayError = "no mcp-gateway configured";
    }
    const body: McpServersResponse = {
      servers: configured.map((server) => ({
        id: server.id,
        transport: server.transport.type,
        enabled: server.enabled !== false,
        healthy: live.get(server.id)?.healthy ?? null,
        tools: live.get(server.id)?.tools ?? [],
      })),
      ...(gatewayError ? { gateway_error: gatewayError } : {}),
    };
    return c.json(body);
  });

  app.get("/default-tools", (c) => c.json(defaultTools(deps.config)));

  app.get("/alert-types", (c) => {
    const body: AlertTypesResponse = {
      alert_types: listAlertTypes(deps.config),
      default_alert_type: deps.config.defaults.alert_type,
      chains: [...deps.config.chains.values()].map((chain) => ({
        id: chain.id,
        alert_types: chain.alert_types,
        description: chain.description ?? null,
        stages: chain.stages.map((s) => s.name),
        chat_enabled: chain.chat.enabled,
      })),
    };
    return c.json(body);
  });

  app.get("/config", (c) => c.json(configView(deps.config)));

  return app;
}
