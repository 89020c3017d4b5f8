import { describe, expect, it } from "vitest";
import { createMetrics } from "./registry.ts";
import { secondsBetween, secondsSince } from "./timing.ts";

describe("createMetrics", () => {
  it("registers only the metrics of its service, labelled with the service", async () => {
    const metrics = createMetrics("stream-relay", { processMetrics: false });
    metrics.wsConnections.set(3);
    metrics.wsFramesSent.inc({ type: "pong" });
    const text = await metrics.registry.metrics();
    expect(text).toContain('tarsy_ws_connections{service="stream-relay"} 3');
    expect(text).toContain('tarsy_ws_frames_sent_total{type="pong",service="stream-relay"} 1');
    expect(text).not.toContain("tarsy_sessions_total");
    expect("sessions" in metrics).toBe(false);
  });

  it("includes the Node.js process metrics unless turned off", async () => {
    const text = await createMetrics("llm-service").registry.metrics();
    expect(text).toMatch(/^process_cpu_seconds_total\{service="llm-service"\} /m);
    expect(text).toContain("nodejs_eventloop_lag_seconds");
  });

  it("reads a gauge at scrape time and keeps the last value when the source is slow or failing", async () => {
    const metrics = createMetrics("orchestrator", { processMetrics: false });
    let next: () => Promise<number> = async () => 7;
    const warnings: string[] = [];
    metrics.collectOnScrape(
      "sessionsActive",
      async (gauge) => {
        gauge.set(await next());
      },
      { timeoutMs: 100, logger: { warn: (_f, m) => void warnings.push(m) } },
    );
    expect(await metrics.registry.metrics()).toContain(
      'tarsy_sessions_active{service="orchestrator"} 7',
    );
    next = () => new Promise(() => {});
    const started = Date.now();
    expect(await metrics.registry.metrics()).toContain(
      'tarsy_sessions_active{service="orchestrator"} 7',
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    next = () => Promise.reject(new Error("db down"));
    expect(await metrics.registry.metrics()).toContain(
      'tarsy_sessions_active{service="orchestrator"} 7',
    );
    expect(warnings).toEqual(["metric not collected", "metric not collected"]);
  });
});

describe("timing helpers", () => {
  it("measures seconds from a performance.now() reading and between two dates", async () => {
    const started = performance.now();
    await new Promise((r) => setTimeout(r, 30));
    expect(secondsSince(started)).toBeGreaterThanOrEqual(0.025);
    expect(secondsSince(started)).toBeLessThan(1);
    const start = new Date("2026-11-22T03:00:00Z");
    expect(secondsBetween(start, new Date("2026-11-22T03:01:30.500Z"))).toBe(90.5);
    expect(secondsBetween(start, new Date("2026-11-22T02:59:00Z"))).toBe(0);
  });
});
