import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureStdio,
  httpTransport,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";

type Who = { pid: number; session: string };

describe("per-execution MCP sessions", { timeout: 90_000 }, () => {
  let gw: TestGateway;
  let http: FixtureHttpServer;

  beforeAll(async () => {
    http = await serveFixtureHttp();
    gw = await startTestGateway(
      [serverConfig("fx", fixtureStdio()), serverConfig("fxhttp", httpTransport("http", http.url))],
      { idleTimeoutMs: 1_500 },
    );
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await http?.close();
  });

  const whoami = async (executionId: string, server: string): Promise<Who> => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const reply = await client.callTool(
      { execution_id: executionId, servers: ["fx", "fxhttp"] },
      { name: `${server}.whoami` },
    );
    expect(reply.is_error, reply.content).toBe(false);
    return JSON.parse(reply.content) as Who;
  };

  it("two concurrent executions never share a session (stdio process or HTTP session)", async () => {
    const [a1, b1, a2, b2] = await Promise.all([
      whoami("exec-a", "fx"),
      whoami("exec-b", "fx"),
      whoami("exec-a", "fxhttp"),
      whoami("exec-b", "fxhttp"),
    ]);
    expect(a1.pid).not.toBe(b1.pid);
    expect(a2.session).not.toBe(b2.session);
    // Concurrent calls of one execution share its one session (no duplicate creation).
    const again = await Promise.all([
      whoami("exec-a", "fx"),
      whoami("exec-a", "fx"),
      whoami("exec-a", "fxhttp"),
    ]);
    expect(again.slice(0, 2).map((w) => w.pid)).toEqual([a1.pid, a1.pid]);
    expect(again[2]?.session).toBe(a2.session);
    // The health monitor has sessions of its own, distinct from both executions.
    expect(gw.gateway.executions.size()).toBe(2);
  }, 60_000);

  it("release closes an execution's sessions; its next use opens new ones", async () => {
    const before = await whoami("exec-release", "fx");
    const client = createMcpGatewayClient(gw.testBus.bus);
    await client.listTools({ execution_id: "exec-release", servers: ["fx"] });
    const released = await client.release("exec-release");
    expect(released).toMatchObject({ released: true });
    expect(released?.closed_sessions).toBeGreaterThanOrEqual(1);
    expect(gw.gateway.executions.has("exec-release")).toBe(false);
    const after = await whoami("exec-release", "fx");
    expect(after.pid).not.toBe(before.pid);
  }, 60_000);

  it("an execution idle past the timeout is closed", async () => {
    await whoami("exec-idle", "fxhttp");
    expect(gw.gateway.executions.has("exec-idle")).toBe(true);
    const deadline = Date.now() + 10_000;
    while (gw.gateway.executions.has("exec-idle") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(gw.gateway.executions.has("exec-idle")).toBe(false);
  }, 30_000);
});
