import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@tarsy/runtime";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CheckResult,
  createOpsRoutes,
  type OpsServer,
  type ReadinessChecks,
  startOpsServer,
} from "./ops-server.ts";
import { createMetrics } from "./registry.ts";

const logger = createLogger({ service: "test", level: "silent" });
const servers: OpsServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(ready?: ReadinessChecks, checkTimeoutMs = 2_000) {
  const metrics = createMetrics("orchestrator", { processMetrics: false });
  const server = await startOpsServer({
    host: "127.0.0.1",
    port: 0,
    registry: metrics.registry,
    logger,
    checkTimeoutMs,
    ...(ready ? { ready } : {}),
  });
  servers.push(server);
  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${server.url}${path}`, init);
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };
  return { server, metrics, get };
}

const ok = () => Promise.resolve();
const down = (reason: string) => () => Promise.reject(new Error(reason));

describe("ops server", () => {
  it("listens on an ephemeral port and reports its URL", async () => {
    const { server } = await start({ nats: ok });
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it("answers /health with 200 while the process runs, even when every dependency is down", async () => {
    const { get, server } = await start({ nats: down("connection closed") });
    const res = await get("/health");
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/json");
    // Before the service gives its checks: healthy with none.
    expect(JSON.parse(res.text)).toEqual({ status: "healthy", version: "0.1.0", checks: {} });
    server.setHealth({
      nats: { check: down("connection closed") },
      database: { check: ok },
    });
    const down1 = await get("/health");
    expect(down1.status).toBe(200); // liveness: a dependency's outage never restarts the pod
    expect(JSON.parse(down1.text)).toEqual({
      status: "unhealthy",
      version: "0.1.0",
      checks: {
        nats: { status: "unhealthy", latency_ms: expect.any(Number), message: "connection closed" },
        database: { status: "healthy", latency_ms: expect.any(Number) },
      },
    });
  });

  it("reports /health as the Go TARSy does: healthy, or degraded by a check whose impact is degraded", async () => {
    const { get, server } = await start();
    server.setHealth({
      nats: { check: ok },
      database: { check: ok },
      worker_pool: { check: () => Promise.resolve({ active: 1, capacity: 4 }) },
    });
    expect(JSON.parse((await get("/health")).text)).toEqual({
      status: "healthy",
      version: "0.1.0",
      checks: {
        nats: { status: "healthy", latency_ms: expect.any(Number) },
        database: { status: "healthy", latency_ms: expect.any(Number) },
        worker_pool: {
          status: "healthy",
          latency_ms: expect.any(Number),
          details: { active: 1, capacity: 4 },
        },
      },
    });
    server.setHealth({
      nats: { check: ok },
      worker_pool: { check: down("stopped"), impact: "degraded" },
    });
    const body = JSON.parse((await get("/health")).text);
    expect(body.status).toBe("degraded");
    expect(body.checks.worker_pool).toMatchObject({ status: "degraded", message: "stopped" });
  });

  it("answers /ready with 200 and every check when all pass", async () => {
    const { get } = await start({ nats: ok, postgres: ok });
    const res = await get("/ready");
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text);
    expect(body.status).toBe("ready");
    expect(Object.keys(body.checks).sort()).toEqual(["nats", "postgres"]);
    expect(body.checks.nats).toEqual({ status: "ok", latency_ms: expect.any(Number) });
  });

  it("answers /ready with 503 naming the failing check and why", async () => {
    const { get } = await start({ nats: ok, postgres: down("ECONNREFUSED 127.0.0.1:5432") });
    const res = await get("/ready");
    expect(res.status).toBe(503);
    const body = JSON.parse(res.text);
    expect(body.status).toBe("not_ready");
    expect(body.checks.nats.status).toBe("ok");
    expect(body.checks.postgres).toMatchObject({
      status: "failing",
      error: "ECONNREFUSED 127.0.0.1:5432",
    });
  });

  it("fails a check that does not answer in time instead of hanging", async () => {
    const { get } = await start({ stuck: () => new Promise(() => {}) }, 100);
    const started = Date.now();
    const res = await get("/ready");
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).checks.stuck).toMatchObject({
      status: "failing",
      error: "no answer in 100 ms",
    });
  });

  it("is not ready while starting, ready once given checks, not ready again when stopping", async () => {
    const { server, get } = await start();
    const starting = await get("/ready");
    expect(starting.status).toBe(503);
    expect(JSON.parse(starting.text).checks.startup).toMatchObject({ error: "starting" });
    server.setReadiness({ nats: ok });
    expect((await get("/ready")).status).toBe(200);
    server.markStopping();
    const stopping = await get("/ready");
    expect(stopping.status).toBe(503);
    expect(JSON.parse(stopping.text).checks.shutdown).toMatchObject({ error: "shutting down" });
    expect((await get("/health")).status).toBe(200);
  });

  it("serves the registry at /metrics in the Prometheus text format with its content type", async () => {
    const { get, metrics } = await start({ nats: ok });
    metrics.sessions.inc({ status: "completed" });
    metrics.sessions.inc({ status: "completed" });
    const res = await get("/metrics");
    expect(res.status).toBe(200);
    expect(res.type).toBe(metrics.registry.contentType);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain("# TYPE tarsy_sessions_total counter");
    expect(res.text).toContain('tarsy_sessions_total{status="completed",service="orchestrator"} 2');
  });

  it("answers anything else with 404 and the error shape", async () => {
    const { get } = await start({ nats: ok });
    for (const [path, init] of [
      ["/nope", undefined],
      ["/metrics", { method: "POST" }],
    ] as const) {
      const res = await get(path, init);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toEqual({
        error: { code: "not_found", message: expect.stringContaining(path) },
      });
    }
  });

  it("answers 500 with the error shape when collecting the metrics fails", async () => {
    const { get, metrics } = await start({ nats: ok });
    metrics.registry.registerMetric({
      name: "broken",
      get: () => Promise.reject(new Error("collector exploded")),
    } as never);
    const res = await get("/metrics");
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({
      error: { code: "internal", message: "collector exploded" },
    });
  });
});

describe("ops routes on a service's own server", () => {
  it("answers /metrics, /health and /ready like the ops server and leaves every other request alone", async () => {
    const metrics = createMetrics("stream-relay", { processMetrics: false });
    const routes = createOpsRoutes({ registry: metrics.registry, logger, ready: { nats: ok } });
    const server = createServer((req, res) => {
      if (routes.handle(req, res)) return;
      res.writeHead(418);
      res.end("the service's own route");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/health`)).json()).toEqual({
        status: "healthy",
        version: "0.1.0",
        checks: {},
      });
      const ready = await fetch(`${base}/ready?verbose=1`);
      expect(ready.status).toBe(200);
      expect(
        ((await ready.json()) as { checks: Record<string, CheckResult> }).checks.nats?.status,
      ).toBe("ok");
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain("# TYPE tarsy_ws_connections gauge");
      for (const [path, init] of [
        ["/api/v1/ws", undefined],
        ["/ready", { method: "POST" }],
      ] as const) {
        const res = await fetch(`${base}${path}`, init);
        expect(res.status).toBe(418);
        expect(await res.text()).toBe("the service's own route");
      }
      routes.markStopping();
      expect((await fetch(`${base}/ready`)).status).toBe(503);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("gives a framework the reply to write (Hono's c.body), nothing for other routes", async () => {
    const metrics = createMetrics("ingest-api", { processMetrics: false });
    const routes = createOpsRoutes({ registry: metrics.registry, logger });
    const ready = await routes.reply("GET", "/ready");
    expect(ready?.status).toBe(503);
    expect(JSON.parse(ready?.body ?? "{}").checks.startup).toMatchObject({ error: "starting" });
    expect((await routes.reply("GET", "/metrics"))?.headers["content-type"]).toBe(
      metrics.registry.contentType,
    );
    expect(await routes.reply("GET", "/api/v1/alerts")).toBeUndefined();
    expect(await routes.reply("DELETE", "/health")).toBeUndefined();
  });
});
