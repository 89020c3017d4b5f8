import { countSessionsWithFingerprintPrefix, countStoredRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ErrorBody, eventually, type Harness, request, startHarness } from "./support.ts";

/** A notification of `count` distinct firing alerts. */
function flood(tag: string, count: number) {
  return {
    version: "4",
    status: "firing",
    receiver: "tarsy",
    groupKey: `{}:{alertname="Flood-${tag}"}`,
    alerts: Array.from({ length: count }, (_, i) => ({
      status: "firing",
      labels: { alertname: "PodCrashLooping", pod: `worker-${i}` },
      annotations: { summary: `pod worker-${i} is crash looping` },
      startsAt: "2026-11-22T03:00:00Z",
      fingerprint: `${tag}-${i.toString(16).padStart(8, "0")}`,
    })),
  };
}

const send = (h: Harness, body: unknown) =>
  request<ErrorBody & { sessions_created: unknown[] }>(`${h.url}/api/v1/alerts/alertmanager`, {
    method: "POST",
    body,
  });

const sessionsOf = (h: Harness, tag: string) =>
  countSessionsWithFingerprintPrefix(h.db.prisma, `${tag}-`);

describe("Alertmanager alert cap, default setting", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("rejects a 10,000-alert notification with 413 at once and stores nothing", async () => {
    const started = Date.now();
    const res = await send(h, flood("big", 10_000));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(res.body.error.details).toEqual({ limit: 1000, count: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await countStoredRows(h.db.prisma)).toMatchObject({ sessions: 0, outbox: 0 });
    expect(h.received.sessionSubmitted).toHaveLength(0);
  });

  it("stops working through a notification when the client goes away", async () => {
    const warn = vi.spyOn(h.deps.logger, "warn");
    const total = 400;
    const controller = new AbortController();
    const sent = fetch(`${h.url}/api/v1/alerts/alertmanager`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(flood("gone", total)),
      signal: controller.signal,
    }).catch((err: unknown) => err);
    await eventually(async () => (await sessionsOf(h, "gone")) > 0, 10_000);
    controller.abort();
    expect(await sent).toBeInstanceOf(Error);
    // The intake notices between two alerts and says how far it got.
    await eventually(() =>
      warn.mock.calls.some((call) => String(call[1]).includes("client went away")),
    );
    const call = warn.mock.calls.find((c) => String(c[1]).includes("client went away"));
    const processed = (call?.[0] as { processed?: number } | undefined)?.processed ?? -1;
    expect(processed).toBeGreaterThan(0);
    expect(processed).toBeLessThan(total);
    expect(await sessionsOf(h, "gone")).toBe(processed);
    warn.mockRestore();
  });
});

describe("Alertmanager alert cap, configured", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ settings: { alertmanager: { maxAlerts: 3 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("accepts a notification at the cap and rejects one alert more before storing any", async () => {
    const over = await send(h, flood("over", 4));
    expect(over.status).toBe(413);
    expect(over.body.error.details).toEqual({ limit: 3, count: 4 });
    expect(over.body.error.message).toMatch(/max_alerts/);
    expect(await sessionsOf(h, "over")).toBe(0);

    const at = await send(h, flood("at", 3));
    expect(at.status).toBe(200);
    expect(at.body.sessions_created).toHaveLength(3);
    expect(await sessionsOf(h, "at")).toBe(3);
    await eventually(() => h.received.sessionSubmitted.length === 3);
  });

  it("rejects labels with NUL by name and stores none of the notification", async () => {
    const hook = flood("nul", 3);
    const last = hook.alerts[2];
    if (!last) throw new Error("flood built too few alerts");
    last.labels.pod = "worker\u0000";
    const res = await send(h, hook);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("alerts.2.labels.pod");
    expect(await sessionsOf(h, "nul")).toBe(0);
  });
});
