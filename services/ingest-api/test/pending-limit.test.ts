import { readFileSync } from "node:fs";
import type { AlertmanagerIntakeResponse } from "@tarsy/contracts";
import { countPendingSessions, listAlertSessions, listSessions } from "@tarsy/db";
import { forceSessionStatusOfType, insertSessionRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ErrorBody,
  eventually,
  FIXTURE_WEBHOOK,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

const LIMIT = 3;
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.deps.config.queue.max_pending_per_alert_type = LIMIT;
});
afterAll(async () => {
  await h?.close();
});

/** `count` pending sessions of a type, inserted directly (as if submitted earlier). */
async function fill(alertType: string, count: number) {
  await insertSessionRows(h.db.prisma, {
    count,
    alertData: "earlier",
    alertType,
    chainId: "quiet-chain",
  });
}

const pending = (alertType: string) => countPendingSessions(h.db.prisma, alertType);

/** Admission took every pending session of the type (they no longer count). */
const admitAll = (alertType: string) =>
  forceSessionStatusOfType(h.db.prisma, alertType, "pending", "in_progress"); // wire-literal: one transition, from and to

const post = <T = Record<string, unknown>>(body: unknown) =>
  request<T>(`${h.url}/api/v1/alerts`, { method: "POST", body });

describe("per-alert-type pending limit, REST", () => {
  it("refuses with 429 and Retry-After, stores and publishes nothing, other types unaffected", async () => {
    await fill("quiet", LIMIT - 1);
    const last = await post<{ session_id: string }>({ alert_type: "quiet", data: "last one" });
    expect(last.status).toBe(202);
    await eventually(() =>
      h.received.sessionSubmitted.some((m) => m.session_id === last.body.session_id),
    );
    const published = h.received.sessionSubmitted.length;

    const refused = await post<ErrorBody>({ alert_type: "quiet", data: "one too many" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.body.error).toMatchObject({
      code: "too_many_pending",
      details: { alert_type: "quiet", max_pending: LIMIT },
    });
    expect(await pending("quiet")).toBe(LIMIT);
    expect((await listSessions(h.db.prisma, { search: "one too many" })).total).toBe(0);

    // Another type is accepted, and its message is the only one published since.
    const other = await post<{ session_id: string }>({ alert_type: "kubernetes", data: "x" });
    expect(other.status).toBe(202);
    await eventually(() =>
      h.received.sessionSubmitted.some((m) => m.session_id === other.body.session_id),
    );
    expect(h.received.sessionSubmitted.slice(published).map((m) => m.session_id)).toEqual([
      other.body.session_id,
    ]);

    // Once the waiting sessions are admitted, the type is accepted again.
    await admitAll("quiet");
    expect((await post({ alert_type: "quiet", data: "later" })).status).toBe(202);
  });
});

type Hook = { groupKey: string; alerts: { fingerprint: string; labels: Record<string, string> }[] };

describe("per-alert-type pending limit, Alertmanager webhook", () => {
  const send = (body: unknown) =>
    request<ErrorBody & AlertmanagerIntakeResponse>(`${h.url}/api/v1/alerts/alertmanager`, {
      method: "POST",
      body,
    });

  it("stores the alerts under the limit, answers 503 so Alertmanager retries, and the retry completes it", async () => {
    const hook = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8")) as Hook;
    const type = hook.alerts[0]?.labels.alertname ?? "";
    expect(hook.alerts.length).toBe(2);
    expect(hook.alerts.every((a) => a.labels.alertname === type)).toBe(true);
    await fill(type, LIMIT - 1);

    const first = await send(hook);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("30");
    expect(first.body.error.code).toBe("too_many_pending");
    const outcome = first.body.error.details as AlertmanagerIntakeResponse;
    expect(outcome.sessions_created.map((s) => s.fingerprints)).toEqual([
      [hook.alerts[0]?.fingerprint],
    ]);
    expect(outcome.alerts_skipped).toEqual([
      {
        fingerprint: hook.alerts[1]?.fingerprint,
        status: "firing",
        reason: "pending_limit",
        session_id: null,
      },
    ]);
    expect(await pending(type)).toBe(LIMIT);
    expect(
      await listAlertSessions(h.db.prisma, { alertFingerprint: hook.alerts[1]?.fingerprint ?? "" }),
    ).toEqual([]);

    // Alertmanager resends the whole notification: still full, still 503, nothing doubled.
    const again = await send(hook);
    expect(again.status).toBe(503);
    expect(await pending(type)).toBe(LIMIT);

    await admitAll(type);
    const retried = await send(hook);
    expect(retried.status).toBe(200);
    expect(retried.body.sessions_created.map((s) => s.fingerprints)).toEqual([
      [hook.alerts[1]?.fingerprint],
    ]);
    expect(retried.body.alerts_skipped.map((s) => [s.fingerprint, s.reason])).toEqual([
      [hook.alerts[0]?.fingerprint, "duplicate"],
    ]);
  });
});
