import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { FIXTURE_WEBHOOK, type Harness, request, startHarness } from "./support.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const alerts = (body: unknown) => request(`${h.url}/api/v1/alerts`, { method: "POST", body });
const webhook = (body: unknown) =>
  request(`${h.url}/api/v1/alerts/alertmanager`, { method: "POST", body });

async function scrape() {
  const res = await fetch(`${h.url}/metrics`);
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** The value of one sample, or 0 when the series does not exist yet. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
const received = (source: string, status: string) =>
  `tarsy_alerts_received_total{source="${source}",status="${status}",service="ingest-api"}`;

describe("GET /metrics", () => {
  it("serves the Prometheus text format next to the existing /health", async () => {
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain("# TYPE tarsy_alerts_received_total counter");
  });

  it("counts alerts by source and outcome: accepted, rejected (4xx), skipped duplicates", async () => {
    const before = (await scrape()).text;
    expect((await alerts({ alert_type: "kubernetes", data: { pod: "api-1" } })).status).toBe(202);
    expect((await alerts({ alert_type: "no-such-type", data: "x" })).status).toBe(400);
    expect((await alerts({ data: 42, unknown_field: true })).status).toBe(400);
    const hook = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8"));
    expect((await webhook(hook)).status).toBe(200); // two firing alerts: two sessions
    expect((await webhook(hook)).status).toBe(200); // the same two again: duplicates
    expect((await webhook({ not: "a webhook" })).status).toBe(400);
    const after = (await scrape()).text;
    const delta = (source: string, status: string) =>
      sample(after, received(source, status)) - sample(before, received(source, status));
    expect(delta("api", "accepted")).toBe(1);
    expect(delta("api", "rejected")).toBe(2);
    expect(delta("api", "failed")).toBe(0);
    expect(delta("alertmanager", "accepted")).toBe(2);
    expect(delta("alertmanager", "skipped")).toBe(2);
    expect(delta("alertmanager", "rejected")).toBe(1);
  });
});

describe("GET /ready", () => {
  it("is ready while NATS answers, with the ops server's body", async () => {
    const res = await fetch(`${h.url}/ready`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      status: "ready",
      checks: { nats: { status: "ok", latency_ms: expect.any(Number) } },
    });
  });

  it("answers 503 naming the failing check and why", async () => {
    const app = createApp({
      ...h.deps,
      ready: { nats: async () => {}, postgres: () => Promise.reject(new Error("ECONNREFUSED")) },
    });
    const res = await app.request("/ready");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: "not_ready",
      checks: { nats: { status: "ok" }, postgres: { status: "failing", error: "ECONNREFUSED" } },
    });
  });
});
