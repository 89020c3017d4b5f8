import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithRecovery } from "../src/call-with-recovery.ts";
import { ServerSessions } from "../src/client/server-sessions.ts";
import { freePort, httpTransport, serverConfig } from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";

describe("ServerSessions: one session per server, serialized (re-)creation", {
  timeout: 90_000,
}, () => {
  let http: FixtureHttpServer;
  beforeAll(async () => {
    http = await serveFixtureHttp();
  });
  afterAll(async () => {
    await http?.close();
  });

  const sessionsFor = (url: string, initTimeoutMs = 5_000) =>
    new ServerSessions({
      servers: new Map([["fx", serverConfig("fx", httpTransport("http", url))]]),
      initTimeoutMs,
      inheritedEnv: {},
    });

  it("concurrent first uses share one session; concurrent re-creations make exactly one more", async () => {
    const sessions = sessionsFor(http.url);
    const before = http.sessions();
    const [a, b, c] = await Promise.all([
      sessions.get("fx"),
      sessions.get("fx"),
      sessions.get("fx"),
    ]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(http.sessions() - before).toBe(1);

    const [r1, r2, r3] = await Promise.all([
      sessions.recreate("fx", a),
      sessions.recreate("fx", a),
      sessions.recreate("fx", a),
    ]);
    expect(r1).toBe(r2);
    expect(r2).toBe(r3);
    expect(r1).not.toBe(a);
    expect(a.isClosed()).toBe(true);
    expect(http.sessions() - before).toBe(2);
    expect(await sessions.closeAll()).toBe(1);
    await expect(sessions.get("fx")).rejects.toThrow(/released/);
  });

  it("a failed open is not cached: the next use tries again", async () => {
    const port = await freePort();
    const sessions = sessionsFor(`http://127.0.0.1:${port}/mcp`);
    await expect(sessions.get("fx")).rejects.toThrow(/failed to initialize MCP server "fx"/);
    const late = await serveFixtureHttp(port);
    try {
      const connection = await sessions.get("fx");
      expect((await connection.listTools(5_000)).length).toBeGreaterThan(5);
    } finally {
      await sessions.closeAll();
      await late.close();
    }
  });

  it("an unconfigured server is an error, never a crash", async () => {
    const sessions = sessionsFor(http.url);
    await expect(sessions.get("nope")).rejects.toThrow(/not configured/);
    await expect(
      callWithRecovery(sessions, "nope", (c) => c.listTools(1_000), { sleep: async () => {} }),
    ).rejects.toThrow(/not configured/);
  });

  it("a server that accepts but never answers fails after the init timeout", async () => {
    const { createServer } = await import("node:net");
    const sockets: import("node:net").Socket[] = [];
    const blackHole = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(0, "127.0.0.1", r));
    const port = (blackHole.address() as import("node:net").AddressInfo).port;
    const sessions = sessionsFor(`http://127.0.0.1:${port}/mcp`, 700);
    const started = Date.now();
    await expect(sessions.get("fx")).rejects.toThrow(/timed out after 700 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => blackHole.close(() => r()));
  });
});
