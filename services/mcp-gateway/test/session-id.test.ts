/**
 * `{{.SESSION_ID}}` in an MCP server's custom headers and session cleanup URL: each agent
 * execution's own id reaches the server, and each execution's state is deleted when its
 * sessions close. Against a real gateway on NATS and an MCP server built with the SDK.
 */
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTransport, serverConfig, startTestGateway, type TestGateway } from "./helpers.ts";
import { type SessionServer, startSessionServer } from "./servers/session-server.ts";

describe("per-execution session id", () => {
  let sandbox: SessionServer;
  let gw: TestGateway;

  beforeAll(async () => {
    sandbox = await startSessionServer();
    gw = await startTestGateway([
      serverConfig(
        "cli",
        httpTransport("http", `${sandbox.base}/mcp`, {
          custom_headers: { "X-Session-ID": "{{.SESSION_ID}}" },
          session_cleanup_url: `${sandbox.base}/sessions/{{.SESSION_ID}}`,
        }),
      ),
      { ...serverConfig("off", httpTransport("http", "http://127.0.0.1:1/mcp")), enabled: false },
    ]);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await sandbox?.close();
  });

  it("sends each of two parallel agents' own execution id, and deletes each one's session", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const before = sandbox.sessionHeaders.length;
    const ask = (executionId: string) =>
      client.callTool(
        { execution_id: executionId, servers: ["cli"] },
        { name: "cli.whoami", arguments: "{}" },
      );
    const [a, b] = await Promise.all([ask("exec-agent-a"), ask("exec-agent-b")]);
    expect(a.content).toBe("sandbox:exec-agent-a");
    expect(b.content).toBe("sandbox:exec-agent-b");
    // Every request of an execution carried its id (the health monitor's carry none).
    const seen = new Set(sandbox.sessionHeaders.slice(before));
    expect(seen).toEqual(new Set(["exec-agent-a", "exec-agent-b"]));
    expect(sandbox.deleted).toEqual([]);

    await Promise.all([client.release("exec-agent-a"), client.release("exec-agent-b")]);
    expect([...sandbox.deleted].sort()).toEqual(["exec-agent-a", "exec-agent-b"]);
  });

  it("leaves the header out where there is no execution (health checks)", () => {
    expect(sandbox.sessionHeaders.slice(0, 2)).toContain(null);
    expect(sandbox.sessionHeaders).not.toContain("");
    expect(sandbox.sessionHeaders).not.toContain("{{.SESSION_ID}}");
  });

  it("a cleanup the server refuses is only a warning: the release still succeeds", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    sandbox.deleteStatus = 500;
    try {
      const reply = await client.callTool(
        { execution_id: "exec-refused", servers: ["cli"] },
        { name: "cli.whoami", arguments: "{}" },
      );
      expect(reply.content).toBe("sandbox:exec-refused");
      const released = await client.release("exec-refused");
      expect(released?.released).toBe(true);
      expect(sandbox.deleted).toContain("exec-refused");
    } finally {
      sandbox.deleteStatus = 204;
    }
  });

  it("does not start, check or offer a server with enabled: false", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const health = await client.health();
    expect(health.servers.map((s) => s.server)).toEqual(["cli"]);
    expect(health.ready).toBe(true);
    const reply = await client.callTool(
      { execution_id: "exec-off", servers: ["off"] },
      { name: "off.anything", arguments: "{}" },
    );
    expect(reply.is_error).toBe(true);
    await client.release("exec-off");
  });
});
