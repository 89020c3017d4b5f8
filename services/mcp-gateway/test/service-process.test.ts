import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { connectBus } from "@tarsy/bus";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { isAlive, until } from "@tarsy/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_SERVER, KUBERNETES_MCP_BIN, REPO_ROOT, TSX_BIN, testLogger } from "./helpers.ts";
import { plantedForms } from "./servers/fixtures.ts";

describe("the mcp-gateway process (src/main.ts)", { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-mcp-gateway-"));
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads MCP servers from tarsy.yaml, serves NATS, masks, logs no secret and stops cleanly on SIGTERM", async () => {
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\ncurrent-context: d\nusers: [{name: d, user: {token: x}}]\n",
    );
    writeFileSync(
      join(dir, "tarsy.yaml"),
      `mcp_servers:
  kubernetes-server:
    transport:
      type: stdio
      command: ${KUBERNETES_MCP_BIN}
      args: ["--read-only", "--kubeconfig", "${kubeconfig}"]
  fixture:
    transport:
      type: stdio
      command: ${TSX_BIN}
      args: ["${FIXTURE_SERVER}"]
    data_masking:
      pattern_groups: [kubernetes, security]
`,
    );
    const prefix = `t${randomBytes(4).toString("hex")}`;
    child = spawn(TSX_BIN, [resolve(REPO_ROOT, "services/mcp-gateway/src/main.ts")], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        TARSY_CONFIG_DIR: dir,
        TARSY_SUBJECT_PREFIX: prefix,
        MCP_GATEWAY_REPLICA_ID: "proc-1",
        METRICS_HOST: "127.0.0.1",
        METRICS_PORT: "0",
        LOG_LEVEL: "debug",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((r) => child?.once("exit", (code) => r(code)));

    const bus = await connectBus({
      servers: "nats://127.0.0.1:4222",
      name: "proc-test",
      logger: testLogger(),
      prefix,
    });
    try {
      const client = createMcpGatewayClient(bus, { shortTimeoutMs: 1_000 });
      let health: Awaited<ReturnType<typeof client.health>> | undefined;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        health = await client.health().catch(() => undefined);
        if (health?.ready) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(health, output).toMatchObject({ ready: true, replica: { id: "proc-1" } });
      expect(health?.servers.map((s) => s.server).sort()).toEqual(["fixture", "kubernetes-server"]);

      const scope = { execution_id: "exec-proc", servers: ["fixture"] };
      const secret = await client.callTool(scope, { name: "fixture.get_secret_yaml" });
      for (const s of plantedForms()) expect(secret.content).not.toContain(s);
      const env = await client.callTool(scope, { name: "fixture.env_dump" });
      for (const s of plantedForms()) expect(env.content).not.toContain(s);
      const who = JSON.parse(
        (await client.callTool(scope, { name: "fixture.whoami" })).content,
      ) as { pid: number };
      expect(isAlive(who.pid)).toBe(true);

      // Its ops server: ready with its MCP servers up, and the calls above counted.
      const base = output
        .split("\n")
        .filter((line) => line.includes('"ops server listening'))
        .map((line) => (JSON.parse(line) as { url: string }).url)[0];
      expect(base, output).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: "ready",
        checks: { nats: { status: "ok" }, mcp_servers: { status: "ok" } },
      });
      const liveness = await fetch(`${base}/health`);
      expect(liveness.status).toBe(200);
      expect(await liveness.json()).toEqual({
        status: "healthy",
        version: "0.1.0",
        checks: { nats: { status: "healthy", latency_ms: expect.any(Number) } },
      });
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain(
        'tarsy_mcp_calls_total{server="fixture",tool="get_secret_yaml",status="ok",service="mcp-gateway"} 1',
      );
      expect(text).toMatch(
        /^tarsy_masking_redactions_total\{pattern="[a-z_]+",service="mcp-gateway"\} [1-9]/m,
      );

      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      // Its stdio MCP servers went with it.
      await until(() => !isAlive(who.pid), {
        what: "its stdio MCP server to exit",
        timeoutMs: 5_000,
        intervalMs: 100,
      });
      expect(isAlive(who.pid)).toBe(false);
      expect(output).toContain("mcp-gateway serving");
      for (const s of plantedForms()) expect(output).not.toContain(s);
    } finally {
      await bus.close();
    }
  }, 120_000);
});
