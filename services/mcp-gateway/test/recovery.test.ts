import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureStdio, serverConfig, startTestGateway, type TestGateway } from "./helpers.ts";

describe("recovery and timeouts against a real stdio server", { timeout: 90_000 }, () => {
  let gw: TestGateway;
  const marker = join(tmpdir(), `tarsy-crash-marker-${process.pid}-${Date.now()}`);

  beforeAll(async () => {
    gw = await startTestGateway(
      [serverConfig("fixture", fixtureStdio({ CRASH_MARKER: marker, SHARED_VAR: "from-config" }))],
      {
        timeouts: { callMs: 1_500 },
        inheritedEnv: { ...process.env, GATEWAY_ONLY_VAR: "inherited", SHARED_VAR: "from-gateway" },
      },
    );
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    rmSync(marker, { force: true });
  });

  it("a server that crashes mid-call is re-created and the call retried once", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-crash", servers: ["fixture"] };
    const before = JSON.parse(
      (await client.callTool(scope, { name: "fixture.whoami" })).content,
    ) as {
      pid: number;
    };
    const started = Date.now();
    const reply = await client.callTool(scope, { name: "fixture.crash_once" });
    const elapsed = Date.now() - started;
    expect(existsSync(marker)).toBe(true);
    // The crashed process wrote its pid before exiting; the retry ran in a new one.
    expect(Number(readFileSync(marker, "utf8"))).toBe(before.pid);
    expect(reply.is_error).toBe(false);
    expect(reply.content).toMatch(/^survived pid=\d+$/);
    const survivor = Number(reply.content.split("=")[1]);
    expect(survivor).not.toBe(before.pid);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    // The execution keeps using the new session.
    const after = JSON.parse(
      (await client.callTool(scope, { name: "fixture.whoami" })).content,
    ) as {
      pid: number;
    };
    expect(after.pid).toBe(survivor);
    await client.release(scope.execution_id);
  });

  it("a hanging tool times out as isError content, and the session stays usable", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-hang", servers: ["fixture"] };
    // Open the session first so the timing below is the call's alone.
    await client.listTools(scope);
    const started = Date.now();
    const reply = await client.callTool(scope, { name: "fixture.hang" });
    const elapsed = Date.now() - started;
    expect(reply.is_error).toBe(true);
    expect(reply.content).toMatch(/MCP tool execution failed: .*timed out/i);
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(5_000);
    const next = await client.callTool(scope, { name: "fixture.echo_args", arguments: "a: 1" });
    expect(next.is_error).toBe(false);
    expect(JSON.parse(next.content)).toEqual({ a: 1 });
    await client.release(scope.execution_id);
  });

  it("a stdio server inherits the gateway's environment, with the config's env on top", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-env", servers: ["fixture"] };
    const read = async (name: string) =>
      JSON.parse(
        (await client.callTool(scope, { name: "fixture.env_var", arguments: `name: ${name}` }))
          .content,
      ).value as string | null;
    expect(await read("GATEWAY_ONLY_VAR")).toBe("inherited");
    expect(await read("SHARED_VAR")).toBe("from-config");
    expect(await read("CRASH_MARKER")).toBe(marker);
    expect(await read("NOT_SET_ANYWHERE_42")).toBeNull();
    await client.release("exec-env");
  });

  it("a tool's own error result comes back as isError content", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const reply = await client.callTool(
      { execution_id: "exec-fail", servers: ["fixture"] },
      { name: "fixture.fail" },
    );
    expect(reply).toMatchObject({
      is_error: true,
      content: "the backend said no",
      server: "fixture",
      tool: "fail",
    });
    await client.release("exec-fail");
  });
});
