import { Writable } from "node:stream";
import type { McpHealthReply } from "@tarsy/contracts";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createLogger } from "@tarsy/runtime";
import { until } from "@tarsy/testkit";
import { afterAll, describe, expect, it } from "vitest";
import {
  freePort,
  httpTransport,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";

describe("health monitor", { timeout: 90_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("a server that goes down raises one warning, cleared when it comes back", async () => {
    const port = await freePort();
    let server: FixtureHttpServer = await serveFixtureHttp(port);
    const logged: Array<{ msg: string; server?: string }> = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean))
          logged.push(JSON.parse(line));
        done();
      },
    });
    const gw: TestGateway = await startTestGateway(
      [serverConfig("flaky", httpTransport("http", server.url))],
      {
        logger: createLogger({ service: "mcp-gateway", level: "info", destination }),
        healthIntervalMs: 200,
        timeouts: { healthPingMs: 1_000, initMs: 2_000 },
      },
    );
    cleanups.push(() => gw.stop());
    const client = createMcpGatewayClient(gw.testBus.bus);

    const healthy = await client.health();
    expect(healthy).toMatchObject({ ready: true, healthy: true });
    expect(healthy.servers[0]).toMatchObject({ server: "flaky", healthy: true, tool_count: 15 });
    expect((await client.warnings()).warnings).toEqual([]);

    await server.close();
    const down = await until(
      async () => {
        const w = await client.warnings();
        return w.warnings.length > 0 && w;
      },
      { what: "a warning", timeoutMs: 15_000 },
    );
    expect(down.warnings).toHaveLength(1);
    expect(down.warnings[0]).toMatchObject({ category: "mcp_health", server_id: "flaky" });
    expect(down.warnings[0]?.message).toContain("flaky");
    const unhealthy = await client.health();
    expect(unhealthy.healthy).toBe(false);
    expect(unhealthy.servers[0]?.error).toBeTruthy();
    // Still ready: readiness is about start-up, degradation is reported as health and warnings.
    expect(unhealthy.ready).toBe(true);

    // Two more checks have run (and failed) since: still one warning (deduplicated per server).
    const lastCheck = (h: McpHealthReply) => Date.parse(h.servers[0]?.last_check ?? "") || 0;
    const checkedAfter = async (since: number) => {
      const health = await until(
        async () => {
          const h = await client.health();
          return lastCheck(h) > since && h;
        },
        { what: "a health check after the last one", timeoutMs: 15_000 },
      );
      expect(lastCheck(health)).toBeGreaterThan(since);
      expect(health.servers[0]?.healthy).toBe(false);
      return lastCheck(health);
    };
    await checkedAfter(await checkedAfter(lastCheck(unhealthy)));
    const later = await client.warnings();
    expect(later.warnings).toHaveLength(1);
    expect(later.warnings[0]?.id).toBe(down.warnings[0]?.id);
    // And one log line for the outage, not one per failed check.
    const said = (msg: string) => logged.filter((l) => l.msg === msg && l.server === "flaky");
    expect(said("MCP server health check failed")).toHaveLength(1);

    server = await serveFixtureHttp(port);
    cleanups.push(() => server.close());
    const recovered = await until(
      async () => {
        const h = await client.health();
        return h.healthy && h;
      },
      { what: "the server to be healthy again", timeoutMs: 15_000 },
    );
    expect(recovered.servers[0]).toMatchObject({ healthy: true, tool_count: 15 });
    expect((await client.warnings()).warnings).toEqual([]);
    expect(said("MCP server recovered")).toHaveLength(1);
  }, 60_000);

  it("is not ready while a configured server never initialized, and says which", async () => {
    const port = await freePort();
    const gw = await startTestGateway(
      [serverConfig("absent", httpTransport("http", `http://127.0.0.1:${port}/mcp`))],
      { healthIntervalMs: 200, timeouts: { healthPingMs: 1_000, initMs: 2_000 } },
    );
    cleanups.push(() => gw.stop());
    const client = createMcpGatewayClient(gw.testBus.bus);
    const health = await client.health();
    expect(health.ready).toBe(false);
    expect(health.not_ready_reason).toMatch(/absent: /);
    expect(health.servers[0]).toMatchObject({
      server: "absent",
      healthy: false,
      initialized: false,
    });

    const server = await serveFixtureHttp(port);
    cleanups.push(() => server.close());
    const ready = await until(
      async () => {
        const h = await client.health();
        return h.ready && h;
      },
      { what: "the gateway to be ready", timeoutMs: 15_000 },
    );
    expect(ready).toMatchObject({ ready: true, healthy: true });
    const cached = await client.serverTools();
    expect(cached.servers[0]?.tools.map((t) => t.name)).toContain("absent.whoami");
  }, 60_000);
});
