import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AlertTypesResponse,
  AlertTypesResponseSchema,
  type HealthResponse,
  HealthResponseSchema,
  type McpServersResponse,
  McpServersResponseSchema,
  SystemWarningsResponseSchema,
} from "@tarsy/contracts";
import { createLlmClient } from "@tarsy/llm-client";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_RULES } from "../src/authz/rules.ts";
import {
  CONFIG_DIR,
  conforms,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

describe("system endpoints with a gateway answering", () => {
  let h: Harness;
  let staticDir: string;
  beforeAll(async () => {
    staticDir = mkdtempSync(join(tmpdir(), "ingest-dashboard-"));
    writeFileSync(join(staticDir, "index.html"), "<html>dashboard</html>");
    writeFileSync(join(staticDir, "app.js"), "console.log('app')");
    h = await startHarness({
      gateway: true,
      settings: { staticDir, wsUrl: "ws://relay.example:8081/api/v1/ws" },
    });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(staticDir, { recursive: true, force: true });
  });

  it("GET /health is 200 healthy with per-dependency status and no warnings", async () => {
    const res = await request<HealthResponse>(`${h.url}/health`);
    expect(res.status).toBe(200);
    expect(HealthResponseSchema.parse(res.body)).toBeTruthy();
    expect(res.body.status).toBe("healthy");
    expect(res.body.version).toBe("0.1.0");
    expect(Object.keys(res.body.checks).sort()).toEqual([
      "database",
      "llm_service",
      "mcp_gateway",
      "nats",
      "postgres",
    ]);
    expect(res.body.checks.database.status).toBe("healthy");
    expect(res.body.checks.postgres.status).toBe("healthy");
    expect(res.body.checks.nats.status).toBe("healthy");
    expect(res.body.checks.mcp_gateway.status).toBe("healthy");
    expect(res.body.checks.llm_service.status).toBe("not_configured");
    // The fixture: the 6 built-in agents, the built-in chain and 2 of its own, 3 MCP servers
    // (kubernetes-server replaced, everything, the disabled one), the 5 built-in providers.
    expect(res.body.configuration).toEqual({
      agents: 6,
      chains: 3,
      mcp_servers: 3,
      llm_providers: 5,
    });
    expect(res.body.warnings).toEqual([]);
  });

  it("lists no system warnings while every server is healthy", async () => {
    const res = await request<{ warnings: unknown[] }>(`${h.url}/api/v1/system/warnings`);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual([]);
  });

  it("lists the configured MCP servers with the gateway's tools", async () => {
    const res = await request<McpServersResponse>(`${h.url}/api/v1/system/mcp-servers`);
    expect(res.status).toBe(200);
    conforms(McpServersResponseSchema, res.body);
    expect(res.body.gateway_error).toBeUndefined();
    const byId = new Map(res.body.servers.map((s) => [s.id, s]));
    expect(byId.get("everything")).toMatchObject({ transport: "stdio", healthy: true });
    expect(byId.get("everything")?.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["echo", "get-sum"]),
    );
    expect(byId.get("kubernetes-server")).toMatchObject({ healthy: true, enabled: true });
    expect(byId.get("kubernetes-server")?.tools.map((t) => t.name)).toContain("echo");
    // enabled: false — listed as disabled, never started by the gateway (so no health, no tools).
    expect(byId.get("retired")).toEqual({
      id: "retired",
      transport: "http",
      enabled: false,
      healthy: null,
      tools: [],
    });
  });

  it("lists alert types and chains", async () => {
    const res = await request<AlertTypesResponse>(`${h.url}/api/v1/system/alert-types`);
    conforms(AlertTypesResponseSchema, res.body);
    expect(res.body.alert_types).toEqual(["KubePodCrashLooping", "kubernetes", "quiet"]);
    expect(res.body.default_alert_type).toBe("kubernetes");
    const quiet = res.body.chains.find((c) => c.id === "quiet-chain");
    expect(quiet).toMatchObject({
      alert_types: ["quiet"],
      chat_enabled: false,
      stages: ["investigate"],
    });
  });

  it("serves an OpenAPI document covering every route", async () => {
    const res = await request<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      `${h.url}/api/v1/openapi.json`,
    );
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        "/health",
        "/api/v1/alerts",
        "/api/v1/alerts/alertmanager",
        "/api/v1/sessions",
        "/api/v1/sessions/active",
        "/api/v1/sessions/{id}",
        "/api/v1/sessions/{id}/timeline",
        "/api/v1/sessions/{id}/cancel",
        "/api/v1/sessions/{id}/chat/messages",
        "/api/v1/sessions/{id}/trace",
        "/api/v1/sessions/{id}/trace/llm/{interaction_id}",
        "/api/v1/sessions/{id}/trace/mcp/{interaction_id}",
        "/api/v1/system/warnings",
        "/api/v1/system/mcp-servers",
        "/api/v1/system/alert-types",
        "/api/v1/system/config",
      ]),
    );
    // Every API route the app serves (its authorization table lists them all) is documented.
    for (const { method, path } of ROUTE_RULES) {
      if (!path.startsWith("/api/") || path === "/api/v1/openapi.json") continue;
      const documented = path
        .replace(":interactionId", "{interaction_id}")
        .replace(/:([A-Za-z]+)/g, "{$1}");
      expect(res.body.paths[documented], `${method} ${path}`).toHaveProperty(method.toLowerCase());
    }
    const alerts = res.body.paths["/api/v1/alerts"]?.post as {
      requestBody: { content: { "application/json": { schema: { properties: object } } } };
    };
    expect(Object.keys(alerts.requestBody.content["application/json"].schema.properties)).toEqual(
      expect.arrayContaining(["alert_type", "data", "runbook", "mcp"]),
    );
  });

  it("serves the dashboard build with an index.html fallback, never for /api", async () => {
    const js = await fetch(`${h.url}/app.js`);
    expect(await js.text()).toContain("console.log");
    const route = await fetch(`${h.url}/sessions/123`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain("dashboard");
    const config = await request<{ ws_url: string }>(`${h.url}/config.json`);
    expect(config.body).toEqual({ ws_url: "ws://relay.example:8081/api/v1/ws" });
    const api = await request<ErrorBody>(`${h.url}/api/v1/unknown`);
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe("not_found");
  });
});

describe("health with a gateway whose MCP server cannot start", () => {
  let h: Harness;
  let configDir: string;
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), "ingest-config-"));
    const yaml = readFileSync(join(CONFIG_DIR, "tarsy.yaml"), "utf8").replace(
      "agent_chains:",
      "  broken:\n    transport:\n      type: stdio\n      command: /bin/false\nagent_chains:",
    );
    writeFileSync(join(configDir, "tarsy.yaml"), yaml);
    h = await startHarness({ gateway: true, gatewayWaitReady: false, configDir });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  it("GET /health is 503 degraded, names the server, and includes the gateway's warnings", async () => {
    let res = await request<HealthResponse>(`${h.url}/health`);
    await eventually(async () => {
      res = await request<HealthResponse>(`${h.url}/health`);
      return res.body.warnings.length > 0;
    }, 20_000);
    expect(res.status).toBe(503);
    expect(res.body.status).toBe("degraded");
    expect(res.body.checks.mcp_gateway.status).toBe("not_ready");
    expect(res.body.checks.mcp_gateway.error).toContain("broken");
    expect(res.body.checks.postgres.status).toBe("healthy");
    expect(res.body.warnings.map((w) => w.server_id)).toContain("broken");
    const warnings = await request<{ warnings: { server_id: string }[] }>(
      `${h.url}/api/v1/system/warnings`,
    );
    expect(warnings.status).toBe(200);
    conforms(SystemWarningsResponseSchema, warnings.body);
    expect(warnings.body.warnings.map((w) => w.server_id)).toContain("broken");
  });
});

describe("health when dependencies are missing", () => {
  let h: Harness;
  const llm = createLlmClient({ address: "127.0.0.1:1" });
  beforeAll(async () => {
    // No gateway answers on this bus; llm-service is configured but nothing listens there.
    h = await startHarness({
      gateway: false,
      llmHealth: () => llm.health({ deadline: Date.now() + 1_000 }),
    });
    h.deps.gateway = createMcpGatewayClient(h.bus, { shortTimeoutMs: 500 });
  });
  afterAll(async () => {
    llm.close();
    await h?.close();
  });

  it("GET /health is 503 degraded and names what is down", async () => {
    const res = await request<HealthResponse>(`${h.url}/health`);
    expect(res.status).toBe(503);
    expect(res.body.status).toBe("degraded");
    expect(res.body.checks.postgres.status).toBe("healthy");
    expect(res.body.checks.nats.status).toBe("healthy");
    expect(res.body.checks.mcp_gateway.status).toBe("unhealthy");
    expect(res.body.checks.mcp_gateway.error).toBeTruthy();
    expect(res.body.checks.llm_service.status).toBe("unhealthy");
  });

  it("still lists configured MCP servers, without tools, and says why", async () => {
    const res = await request<McpServersResponse>(`${h.url}/api/v1/system/mcp-servers`);
    expect(res.status).toBe(200);
    expect(res.body.gateway_error).toBeTruthy();
    expect(res.body.servers.map((s) => [s.id, s.healthy, s.tools.length])).toEqual(
      expect.arrayContaining([
        ["everything", null, 0],
        ["kubernetes-server", null, 0],
      ]),
    );
    const warnings = await request<ErrorBody>(`${h.url}/api/v1/system/warnings`);
    expect(warnings.status).toBe(503);
    expect(warnings.body.error.code).toBe("unavailable");
  });
});
