import { readFileSync } from "node:fs";
import {
  type AlertmanagerIntakeResponse,
  AlertmanagerIntakeResponseSchema,
} from "@tarsy/contracts";
import { getSession, listAlertSessions } from "@tarsy/db";
import { backdateSession, countStoredRows, forceSessionStatus } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  conforms,
  type ErrorBody,
  eventually,
  FIXTURE_WEBHOOK,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

type Hook = {
  status: string;
  groupKey: string;
  truncatedAlerts: number;
  alerts: {
    status: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    endsAt: string;
    fingerprint: string;
  }[];
  [key: string]: unknown;
};

/** The captured Alertmanager 0.25 notification, with a third alert and unique fingerprints. */
function notification(tag: string): Hook {
  const hook = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8")) as Hook;
  const third = structuredClone(hook.alerts[1]);
  if (!third) throw new Error("fixture changed");
  third.labels.pod = "worker-2";
  third.annotations = { summary: "Pod prod/worker-2 is crash looping" };
  third.fingerprint = "c0ffee0000000003";
  hook.alerts.push(third);
  for (const alert of hook.alerts) alert.fingerprint = `${tag}-${alert.fingerprint}`;
  hook.groupKey = `${hook.groupKey}-${tag}`;
  return hook;
}

function resolved(hook: Hook, count = hook.alerts.length): Hook {
  const copy = structuredClone(hook);
  copy.status = "resolved";
  copy.alerts = copy.alerts.slice(0, count).map((a) => ({
    ...a,
    status: "resolved",
    endsAt: "2026-11-22T03:30:00Z",
  }));
  return copy;
}

/** The stored sessions with these ids (missing ones left out). */
async function sessionsById(h: Harness, ids: string[]) {
  const rows = await Promise.all(ids.map((id) => getSession(h.db.prisma, id)));
  return rows.filter((row) => row !== null);
}

const send = (h: Harness, body: unknown, headers?: Record<string, string>) =>
  request<AlertmanagerIntakeResponse>(`${h.url}/api/v1/alerts/alertmanager`, {
    method: "POST",
    body,
    headers: { "user-agent": "Alertmanager/0.25.0", ...headers },
  });

describe("Alertmanager webhook, one session per alert, no auth", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("starts one session per alert of a grouped notification with three alerts", async () => {
    const hook = notification("grp");
    const res = await send(h, hook);
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("per_alert");
    conforms(AlertmanagerIntakeResponseSchema, res.body);
    expect(res.body.alerts_skipped).toEqual([]);
    expect(res.body.sessions_created).toHaveLength(3);
    expect(res.body.sessions_created.map((s) => s.fingerprints[0])).toEqual(
      hook.alerts.map((a) => a.fingerprint),
    );
    const rows = await sessionsById(
      h,
      res.body.sessions_created.map((s) => s.session_id),
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({
        status: "pending",
        alertType: "KubePodCrashLooping",
        chainId: "crashloop-chain",
        author: "alertmanager",
        alertGroupKey: hook.groupKey,
      });
    }
    const first = rows.find((r) => r.alertFingerprint === hook.alerts[0]?.fingerprint);
    expect(first?.runbookUrl).toBe("https://github.com/org/runbooks/blob/main/crashloop.md");
    expect(first?.alertLabels).toMatchObject({ pod: "api-7d9f", namespace: "prod" });
    const data = JSON.parse(first?.alertData ?? "{}");
    expect(data.alert).toMatchObject({ status: "firing", labels: { pod: "api-7d9f" } });
    expect(data.alert.ends_at).toBeUndefined(); // Alertmanager's zero time is dropped
    const second = rows.find((r) => r.alertFingerprint === hook.alerts[1]?.fingerprint);
    expect(second?.runbookUrl).toBeNull();
    await eventually(() =>
      rows.every((r) => h.received.sessionSubmitted.some((m) => m.session_id === r.id)),
    );
  });

  it("takes each alert's Slack fingerprint from its label, else its annotation", async () => {
    const hook = notification("slack");
    const [a, b, c] = hook.alerts;
    if (!a || !b || !c) throw new Error("fixture changed");
    a.labels.slack_message_fingerprint = "from-label";
    a.annotations.slack_message_fingerprint = "from-annotation";
    b.annotations.slack_message_fingerprint = "  only-annotation ";
    const res = await send(h, hook);
    expect(res.status).toBe(200);
    const rows = await sessionsById(
      h,
      res.body.sessions_created.map((s) => s.session_id),
    );
    const byFp = (fp: string | undefined) => rows.find((r) => r.alertFingerprint === fp);
    expect(byFp(a.fingerprint)?.slackMessageFingerprint).toBe("from-label");
    expect(byFp(b.fingerprint)?.slackMessageFingerprint).toBe("only-annotation");
    expect(byFp(c.fingerprint)?.slackMessageFingerprint).toBeNull();
  });

  it("starts nothing for a repeat notification, until the dedupe window has passed", async () => {
    const hook = notification("rep");
    const first = await send(h, hook);
    const ids = first.body.sessions_created.map((s) => s.session_id);
    const repeat = await send(h, hook);
    expect(repeat.status).toBe(200);
    expect(repeat.body.sessions_created).toEqual([]);
    expect(repeat.body.alerts_skipped).toEqual(
      hook.alerts.map((a, i) => ({
        fingerprint: a.fingerprint,
        status: "firing",
        reason: "duplicate",
        session_id: ids[i],
      })),
    );
    // One investigation completed 5 hours ago (window 4h): only that alert starts again.
    await forceSessionStatus(h.db.prisma, ids[0] as string, "completed");
    await backdateSession(h.db.prisma, ids[0] as string, new Date(Date.now() - 5 * 3600_000));
    // Another completed just now: still inside the window.
    await forceSessionStatus(h.db.prisma, ids[1] as string, "completed");
    const later = await send(h, hook);
    expect(later.body.sessions_created.map((s) => s.fingerprints)).toEqual([
      [hook.alerts[0]?.fingerprint],
    ]);
    expect(later.body.alerts_skipped.map((s) => s.session_id)).toEqual([ids[1], ids[2]]);
  });

  it("creates exactly one session when the same notification arrives twice at once", async () => {
    const hook = notification("race");
    const [a, b] = await Promise.all([send(h, hook), send(h, hook)]);
    expect(a?.status).toBe(200);
    expect(b?.status).toBe(200);
    const created = [...(a?.body.sessions_created ?? []), ...(b?.body.sessions_created ?? [])];
    expect(created).toHaveLength(3);
    const perAlert = await Promise.all(
      hook.alerts.map((x) => listAlertSessions(h.db.prisma, { alertFingerprint: x.fingerprint })),
    );
    expect(perAlert.flat()).toHaveLength(3);
  });

  it("records a resolved notification on the existing sessions and starts nothing", async () => {
    const hook = notification("res");
    const first = await send(h, hook);
    const ids = first.body.sessions_created.map((s) => s.session_id);
    const before = (await countStoredRows(h.db.prisma)).sessions;
    const done = resolved(hook, 2);
    done.alerts.push({ ...done.alerts[0], fingerprint: "res-never-seen" } as Hook["alerts"][0]);
    const res = await send(h, done);
    expect(res.status).toBe(200);
    expect(res.body.sessions_created).toEqual([]);
    expect(res.body.alerts_skipped).toEqual([
      {
        fingerprint: hook.alerts[0]?.fingerprint,
        status: "resolved",
        reason: "resolved",
        session_id: ids[0],
      },
      {
        fingerprint: hook.alerts[1]?.fingerprint,
        status: "resolved",
        reason: "resolved",
        session_id: ids[1],
      },
      { fingerprint: "res-never-seen", status: "resolved", reason: "resolved", session_id: null },
    ]);
    expect((await countStoredRows(h.db.prisma)).sessions).toBe(before);
    const rows = await sessionsById(h, ids);
    const resolvedAt = new Map(rows.map((r) => [r.id, r.alertResolvedAt?.toISOString() ?? null]));
    expect(resolvedAt.get(ids[0] as string)).toBe("2026-11-22T03:30:00.000Z");
    expect(resolvedAt.get(ids[1] as string)).toBe("2026-11-22T03:30:00.000Z");
    expect(resolvedAt.get(ids[2] as string)).toBeNull();
    const detail = await request<{ alert_resolved_at: string }>(
      `${h.url}/api/v1/sessions/${ids[0]}`,
    );
    expect(detail.body.alert_resolved_at).toBe("2026-11-22T03:30:00.000Z");
  });

  it("reports truncated alerts and tells the agents about them", async () => {
    const hook = notification("trunc");
    hook.truncatedAlerts = 7;
    hook.alerts = hook.alerts.slice(0, 1);
    const res = await send(h, hook);
    expect(res.status).toBe(200);
    expect(res.body.truncated_alerts).toBe(7);
    const row = await getSession(h.db.prisma, res.body.sessions_created[0]?.session_id as string);
    const data = JSON.parse(row?.alertData ?? "{}");
    expect(data.truncated_alerts).toBe(7);
    expect(data.note).toContain("7 more alert(s)");
  });

  it("falls back to the default alert type for an alert name no chain handles", async () => {
    const hook = notification("unk");
    hook.alerts = hook.alerts.slice(0, 1);
    for (const a of hook.alerts) a.labels.alertname = "SomethingElse";
    const res = await send(h, { ...hook, someFutureField: { x: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.sessions_created[0]?.alert_type).toBe("kubernetes");
  });

  it("rejects an invalid payload with field paths and a wrong content type with 415", async () => {
    const bad = await request<{ error: { code: string; details: { fields: { path: string }[] } } }>(
      `${h.url}/api/v1/alerts/alertmanager`,
      { body: { status: "firing", alerts: [{ status: "weird", labels: {} }] } },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.details.fields.map((f) => f.path)).toEqual(
      expect.arrayContaining(["alerts.0.status", "alerts.0.fingerprint"]),
    );
    const text = await request<ErrorBody>(`${h.url}/api/v1/alerts/alertmanager`, {
      method: "POST",
      rawBody: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
  });
});

describe("Alertmanager webhook with bearer auth", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      settings: {
        alertmanager: {
          dedupeWindowMs: 3600_000,
          alertTypeLabel: "alertname",
          mode: "per_alert",
          auth: { kind: "bearer", token: "s3cret-token" },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses a missing or wrong token with 401 and accepts the right one", async () => {
    const hook = notification("auth");
    const missing = await send(h, hook);
    expect(missing.status).toBe(401);
    expect((missing.body as unknown as ErrorBody).error.code).toBe("unauthorized");
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    const wrong = await send(h, hook, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect((await countStoredRows(h.db.prisma)).sessions).toBe(0);
    const right = await send(h, hook, { authorization: "Bearer s3cret-token" });
    expect(right.status).toBe(200);
    expect(right.body.sessions_created).toHaveLength(3);
  });
});

describe("Alertmanager webhook with basic auth, one session per group", () => {
  let h: Harness;
  const basic = (user: string, pass: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`,
  });
  beforeAll(async () => {
    h = await startHarness({
      settings: {
        alertmanager: {
          dedupeWindowMs: 3600_000,
          alertTypeLabel: "alertname",
          mode: "per_group",
          auth: { kind: "basic", username: "am", password: "pw" },
        },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("checks basic credentials", async () => {
    const res = await send(h, notification("b"), basic("am", "wrong"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("Basic");
  });

  it("starts one session for the whole group, skips a repeat, records resolution", async () => {
    const hook = notification("pg");
    const res = await send(h, hook, basic("am", "pw"));
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("per_group");
    expect(res.body.sessions_created).toHaveLength(1);
    const created = res.body.sessions_created[0];
    expect(created?.fingerprints).toEqual(hook.alerts.map((a) => a.fingerprint));
    const row = await getSession(h.db.prisma, created?.session_id as string);
    expect(row).toMatchObject({ alertGroupKey: hook.groupKey, chainId: "crashloop-chain" });
    const data = JSON.parse(row?.alertData ?? "{}");
    expect(data.alerts).toHaveLength(3);
    expect(row?.runbookUrl).toBe("https://github.com/org/runbooks/blob/main/crashloop.md");

    const repeat = await send(h, hook, basic("am", "pw"));
    expect(repeat.body.sessions_created).toEqual([]);
    expect(repeat.body.alerts_skipped.map((s) => [s.reason, s.session_id])).toEqual(
      hook.alerts.map(() => ["group_duplicate", created?.session_id]),
    );

    const done = await send(h, resolved(hook), basic("am", "pw"));
    expect(done.body.sessions_created).toEqual([]);
    expect(done.body.alerts_skipped.every((s) => s.reason === "resolved")).toBe(true);
    const after = await getSession(h.db.prisma, created?.session_id as string);
    expect(after?.alertResolvedAt?.toISOString()).toBe("2026-11-22T03:30:00.000Z");
    expect((await countStoredRows(h.db.prisma)).sessions).toBe(1);
  });
});
