import { resolve } from "node:path";
import type { McpServerConfig } from "@tarsy/config";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createMetrics } from "@tarsy/metrics";
import { isAlive, until } from "@tarsy/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { WarmPool } from "../src/client/warm-pool.ts";
import {
  FIXTURE_SERVER,
  httpTransport,
  REPO_ROOT,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";

type Who = { pid: number; session: string };

/** The fixture server as one node process (tsx's CLI would put a wrapper process before it). */
const fixtureNode = (): McpServerConfig["transport"] => ({
  type: "stdio",
  command: process.execPath,
  args: [
    "--import",
    `file://${resolve(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")}`,
    FIXTURE_SERVER,
  ],
  env: {},
});

/** The process of the one warm session waiting for "fx", once there is one. */
const waitingPid = (pool: WarmPool, what: string) =>
  until(
    () => {
      const pids = pool.idlePids("fx");
      return pids.length === 1 ? pids[0] : undefined;
    },
    { what },
  );

describe("warm MCP pools", { timeout: 120_000 }, () => {
  let http: FixtureHttpServer;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    http = await serveFixtureHttp();
  });
  afterEach(async () => {
    for (const gw of gateways.splice(0)) await gw.stop();
  });
  afterAll(async () => {
    await http?.close();
  });

  const start = async (servers: McpServerConfig[], warmPoolSize: number) => {
    const metrics = createMetrics("mcp-gateway", { processMetrics: false });
    const gw = await startTestGateway(servers, { warmPoolSize, metrics });
    gateways.push(gw);
    const client = createMcpGatewayClient(gw.testBus.bus);
    const whoami = async (executionId: string, server: string): Promise<Who> => {
      const reply = await client.callTool(
        { execution_id: executionId, servers: [server] },
        { name: `${server}.whoami` },
      );
      expect(reply.is_error, reply.content).toBe(false);
      return JSON.parse(reply.content) as Who;
    };
    const release = (executionId: string) => client.release(executionId);
    const takes = async () =>
      Object.fromEntries(
        (await metrics.mcpWarmPoolTakes.get()).values.map((v) => [
          `${v.labels.server}:${v.labels.result}`,
          v.value,
        ]),
      );
    return { gw, whoami, release, takes };
  };

  it("hands each started process to exactly one execution, then starts the next", async () => {
    const { gw, whoami, release, takes } = await start([serverConfig("fx", fixtureNode())], 1);
    const pool = gw.gateway.pool;
    const first = await waitingPid(pool, "a warm process");

    const a = await whoami("exec-a", "fx");
    expect(a.pid).toBe(first);
    // The pool refills behind the hand-out with a process of its own.
    const second = await waitingPid(pool, "the pool to refill");
    expect(second).not.toBe(a.pid);

    const b = await whoami("exec-b", "fx");
    expect(b.pid).toBe(second);
    expect(b.pid).not.toBe(a.pid);
    // An execution keeps its process for all its calls; the other never gets it.
    expect((await whoami("exec-a", "fx")).pid).toBe(a.pid);
    expect((await whoami("exec-b", "fx")).pid).toBe(b.pid);
    expect(await takes()).toEqual({ "fx:warm": 2 });

    // Released, the execution's process ends with it; it never goes back to the pool.
    expect(await release("exec-a")).toMatchObject({ released: true });
    await until(() => !isAlive(a.pid), { what: "exec-a's process to exit" });
    expect(pool.idlePids("fx")).not.toContain(a.pid);
    expect((await whoami("exec-c", "fx")).pid).not.toBe(a.pid);
  });

  it("an execution that finds the pool still opening waits for that session, not a new one", async () => {
    const { gw, whoami, takes } = await start([serverConfig("fx", fixtureNode())], 1);
    // Asked at once: the pool's first process is starting, not yet ready.
    expect(gw.gateway.pool.idleCount("fx")).toBe(0);
    const a = await whoami("exec-a", "fx");
    expect(await takes()).toEqual({ "fx:starting": 1 });
    // It got the pool's process: the pool starts a new one for its next execution.
    const next = await waitingPid(gw.gateway.pool, "the pool to refill");
    expect(next).not.toBe(a.pid);
  });

  it("never hands out a warm process that died, noticed or not", async () => {
    const { gw, whoami } = await start([serverConfig("fx", fixtureNode())], 1);
    const pool = gw.gateway.pool;

    // Killed while waiting, and taken before the pool could notice: the ping before the
    // hand-out finds it dead, and the execution gets a live process.
    const doomed = await waitingPid(pool, "a warm process");
    process.kill(doomed, "SIGKILL");
    const a = await whoami("exec-a", "fx");
    expect(a.pid).not.toBe(doomed);
    expect(isAlive(a.pid)).toBe(true);

    // Killed and noticed: it leaves the pool, which starts another.
    const next = await waitingPid(pool, "the pool to refill");
    process.kill(next, "SIGKILL");
    await until(() => !pool.idlePids("fx").includes(next), { what: "the pool to drop it" });
    const b = await whoami("exec-b", "fx");
    expect([doomed, next]).not.toContain(b.pid);
    await until(() => pool.idleCount("fx") === 1, { what: "the pool to refill after a death" });
  });

  it("0 turns the pool off: nothing starts before an execution asks", async () => {
    const { gw, whoami, takes } = await start(
      [serverConfig("fx", fixtureNode()), serverConfig("fxhttp", httpTransport("http", http.url))],
      0,
    );
    expect(gw.gateway.pool.sizes()).toEqual({});
    const before = http.sessions();
    await whoami("exec-a", "fxhttp");
    // The health monitor's session and this execution's: none opened ahead.
    expect(http.sessions()).toBe(before + 1);
    expect(gw.gateway.pool.idleCount("fx")).toBe(0);
    expect(await takes()).toEqual({});
  });

  it("HTTP sessions are initialized ahead too, one per execution; warm_pool sets a server's size", async () => {
    const { gw, whoami, takes } = await start(
      [
        { ...serverConfig("fxhttp", httpTransport("http", http.url)), warm_pool: 2 },
        { ...serverConfig("fx", fixtureNode()), warm_pool: 0 },
      ],
      1,
    );
    const pool = gw.gateway.pool;
    expect(pool.sizes()).toEqual({ fxhttp: 2 });
    await until(() => pool.idleCount("fxhttp") === 2, { what: "two warm HTTP sessions" });
    const opened = http.sessions();
    const [a, b] = await Promise.all([whoami("exec-a", "fxhttp"), whoami("exec-b", "fxhttp")]);
    expect(a.session).not.toBe(b.session);
    // Both came from the pool: the server saw no initialize for them (only the refills after).
    expect(await takes()).toEqual({ "fxhttp:warm": 2 });
    await until(() => pool.idleCount("fxhttp") === 2, { what: "the pool to refill" });
    expect(http.sessions()).toBe(opened + 2);
    // warm_pool: 0 on the stdio server: its first call starts its process.
    expect(pool.idleCount("fx")).toBe(0);
    await whoami("exec-a", "fx");
    expect(await takes()).toEqual({ "fxhttp:warm": 2 });
  });

  it("a server whose session carries the execution or the user is never pooled", async () => {
    const { gw } = await start(
      [
        {
          ...serverConfig(
            "per-execution",
            httpTransport("http", http.url, { custom_headers: { "X-Session": "{{.SESSION_ID}}" } }),
          ),
          warm_pool: 2,
        },
        {
          ...serverConfig("per-user", httpTransport("http", http.url)),
          auth: { mode: "forward_user_token", fallback_to_shared: false },
        },
        serverConfig("shared", httpTransport("http", http.url)),
      ],
      1,
    );
    expect(gw.gateway.pool.sizes()).toEqual({ shared: 1 });
  });
});
