import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newApiToken } from "@tarsy/authz";
import { createApiToken, listAudit, listSessions } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { receiverStartWarning } from "../src/authz/receiver.ts";
import {
  AUTHZ_CONFIG_DIR,
  type ErrorBody,
  eventually,
  FIXTURE_WEBHOOK,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

/**
 * The Alertmanager webhook while authorization is on: it fails closed without credentials,
 * maps its credentials to `authorization.alertmanager.identity`, and refuses a notification
 * whose project label names a project that identity may not create in, storing nothing.
 */

type Intake = { sessions_created: { project: string }[]; alerts_skipped: { reason: string }[] };
const WEBHOOK_TOKEN = "am-webhook-secret-0123456789";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});

let stamp = 0;
const hook = (project?: string) => {
  const body = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8"));
  stamp += 1;
  for (const [i, a] of body.alerts.entries()) {
    a.fingerprint = `${project ?? "none"}-${i}-${Date.now()}-${stamp}`;
    if (project) a.labels.tarsy_project = project;
  }
  return body;
};
const send = (h: Harness, body: unknown, headers: Record<string, string> = {}) =>
  request<Intake & ErrorBody>(`${h.url}/api/v1/alerts/alertmanager`, { body, headers });
const sessionCount = async (h: Harness) => (await listSessions(h.db.prisma)).total;

describe("authorization on, no webhook credentials", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses every notification with a 401 in the error shape, stores nothing and audits it", async () => {
    const before = await sessionCount(h);
    for (const headers of [
      {} as Record<string, string>,
      bearer("anything"),
      { "x-forwarded-user": "adam", "x-forwarded-groups": "admins" },
    ]) {
      const res = await send(h, hook(), headers);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
      expect(res.body.error.message).toMatch(/ALERTMANAGER_BEARER_TOKEN/);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect(await sessionCount(h)).toBe(before);
    await eventually(async () => {
      const rows = await listAudit(h.db.prisma, { limit: 50, outcome: "denied" });
      return (
        rows.filter((r) => r.path === "/api/v1/alerts/alertmanager" && r.status === 401).length ===
        3
      );
    });
    const [row] = await listAudit(h.db.prisma, { limit: 1, outcome: "denied" });
    expect(row).toMatchObject({ actor: "anonymous", action: "create", remoteAddr: "127.0.0.1" });
  });

  it("still takes an API token that may create, in the token's project", async () => {
    const { token, hash } = newApiToken();
    await createApiToken(h.db.prisma, {
      name: "am-a",
      tokenHash: hash,
      project: "team-a",
      role: "operator-a",
      createdBy: "test",
      expiresAt: null,
    });
    const res = await send(h, hook(), bearer(token));
    expect(res.status).toBe(200);
    expect(res.body.sessions_created.map((s) => s.project)).toEqual(["team-a", "team-a"]);
  });

  it("warns at start that the webhook refuses notifications", () => {
    expect(receiverStartWarning(h.deps)).toMatch(/no credentials: it refuses every notification/);
  });
});

describe("authorization on, webhook bearer credentials", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      configDir: AUTHZ_CONFIG_DIR,
      settings: { alertmanager: { auth: { kind: "bearer", token: WEBHOOK_TOKEN } } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses a missing or wrong bearer with 401 and takes the right one as the receiver's identity", async () => {
    const before = await sessionCount(h);
    for (const headers of [{} as Record<string, string>, bearer("wrong-secret")]) {
      const res = await send(h, hook(), headers);
      expect([res.status, res.body.error.code]).toEqual([401, "unauthorized"]);
    }
    expect(await sessionCount(h)).toBe(before);
    const ok = await send(h, hook(), bearer(WEBHOOK_TOKEN));
    expect(ok.status).toBe(200);
    expect(ok.body.sessions_created.map((s) => s.project)).toEqual(["team-a", "team-a"]);
    const { items } = await listSessions(h.db.prisma, { pageSize: 200 });
    expect(items.filter((s) => s.project === "team-a").map((s) => s.author)).toContain(
      "alertmanager",
    );
    expect(receiverStartWarning(h.deps)).toBeUndefined();
    // The accepted notification is audited: who, what, where, from where, when.
    const allowed = async () =>
      (await listAudit(h.db.prisma, { limit: 50, outcome: "allowed" })).filter(
        (r) => r.path === "/api/v1/alerts/alertmanager",
      );
    await eventually(async () => (await allowed()).length === 1);
    const [row] = await allowed();
    expect(row).toMatchObject({
      actor: "alertmanager",
      identitySource: "receiver",
      action: "create",
      method: "POST",
      status: 200,
      project: "team-a",
      remoteAddr: "127.0.0.1",
      reason: "2 session(s) created, 0 alert(s) skipped",
    });
    expect(Date.now() - (row?.at.getTime() ?? 0)).toBeLessThan(60_000);
  });

  it("refuses a notification whose label names an unconfigured project with a 400 naming it, storing nothing, audited", async () => {
    const before = await sessionCount(h);
    const body = hook("nope");
    const res = await send(h, body, bearer(WEBHOOK_TOKEN));
    expect([res.status, res.body.error.code]).toEqual([400, "unknown_project"]);
    expect(res.body.error.message).toMatch(
      new RegExp(`unknown project 'nope' \\(alert ${body.alerts[0].fingerprint}\\)`),
    );
    expect(await sessionCount(h)).toBe(before);
    await eventually(async () => {
      const rows = await listAudit(h.db.prisma, { limit: 50, outcome: "denied" });
      return rows.some((r) => r.status === 400 && r.project === "nope");
    });
  });

  it("takes a labelled project the receiver may create in, refuses another with 403 storing nothing", async () => {
    const labelled = await send(h, hook("team-b"), bearer(WEBHOOK_TOKEN));
    expect(labelled.status).toBe(200);
    expect(labelled.body.sessions_created.map((s) => s.project)).toEqual(["team-b", "team-b"]);
    const before = await sessionCount(h);
    const forbidden = await send(h, hook("team-c"), bearer(WEBHOOK_TOKEN));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({
      code: "forbidden",
      details: { projects: ["team-c"] },
    });
    // One alert of the notification in a forbidden project: none of it is stored.
    const mixed = hook("team-b");
    mixed.alerts[1].labels.tarsy_project = "team-c";
    const refused = await send(h, mixed, bearer(WEBHOOK_TOKEN));
    expect(refused.status).toBe(403);
    expect(await sessionCount(h)).toBe(before);
    await eventually(async () => {
      const rows = await listAudit(h.db.prisma, { limit: 50, outcome: "denied" });
      return rows.filter((r) => r.status === 403 && r.project === "team-c").length === 2;
    });
    const [row] = await listAudit(h.db.prisma, { limit: 1, outcome: "denied" });
    expect(row).toMatchObject({ actor: "alertmanager", action: "create", status: 403 });
  });
});

describe("authorization on, webhook basic credentials", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      configDir: AUTHZ_CONFIG_DIR,
      settings: {
        alertmanager: { auth: { kind: "basic", username: "am", password: "pw-0123456789" } },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses wrong basic credentials and takes the right ones", async () => {
    for (const headers of [{} as Record<string, string>, basic("am", "wrong")]) {
      expect((await send(h, hook(), headers)).status).toBe(401);
    }
    const ok = await send(h, hook(), basic("am", "pw-0123456789"));
    expect(ok.status).toBe(200);
    expect(ok.body.sessions_created.map((s) => s.project)).toEqual(["team-a", "team-a"]);
  });
});

describe("authorization on, allow_unauthenticated opted in", () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tarsy-authz-open-"));
    cpSync(AUTHZ_CONFIG_DIR, dir, { recursive: true });
    const file = join(dir, "tarsy.yaml");
    const text = readFileSync(file, "utf8");
    const opened = text.replace(
      "    project_label: tarsy_project\n",
      "    project_label: tarsy_project\n    allow_unauthenticated: true\n",
    );
    expect(opened).not.toBe(text);
    writeFileSync(file, opened);
    h = await startHarness({ configDir: dir });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes notifications without credentials, still within the receiver's projects, and warns", async () => {
    const ok = await send(h, hook());
    expect(ok.status).toBe(200);
    expect(ok.body.sessions_created.map((s) => s.project)).toEqual(["team-a", "team-a"]);
    expect((await send(h, hook("team-c"))).status).toBe(403);
    expect(receiverStartWarning(h.deps)).toMatch(/allow_unauthenticated is set/);
  });
});
