import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { newApiToken } from "@tarsy/authz";
import {
  ApiTokenCreatedSchema,
  AuditListResponseSchema,
  AuthMeResponseSchema,
  SessionListResponseSchema,
} from "@tarsy/contracts";
import { createApiToken, listSessions } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  eventually,
  FIXTURE_WEBHOOK,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

const CLI = fileURLToPath(new URL("../../../packages/cli/bin/tarsy.mjs", import.meta.url));
const run = promisify(execFile);
const as = (user: string, groups = "") => ({
  "x-forwarded-user": user,
  ...(groups ? { "x-forwarded-groups": groups } : {}),
});
const ADMIN = as("adam", "admins");
const VIEWER = as("vera", "viewers-a");
const OPERATOR = as("olga", "operators-a");
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const alert = (extra: Record<string, unknown> = {}) => ({
  alert_type: "KubePodCrashLooping",
  data: { pod: "api" },
  ...extra,
});

/** The webhook's own credentials: with authorization on, it refuses notifications without. */
const WEBHOOK_TOKEN = "am-webhook-secret-0123456789";
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

const tarsy = (args: string[], env: Record<string, string>) =>
  run(process.execPath, [CLI, ...args], {
    env: { ...process.env, TARSY_API_URL: h.url, ...env },
  });

describe("projects on submit", () => {
  it("defaults to default_project, takes a named one, refuses unknown (400) and forbidden (403) storing nothing", async () => {
    const before = (await listSessions(h.db.prisma)).total;
    const plain = await request(`${h.url}/api/v1/alerts`, { body: alert(), headers: OPERATOR });
    expect(plain.status).toBe(202);
    const named = await request(`${h.url}/api/v1/alerts`, {
      body: alert({ project: "team-b" }),
      headers: ADMIN,
    });
    expect(named.status).toBe(202);
    const unknown = await request<ErrorBody>(`${h.url}/api/v1/alerts`, {
      body: alert({ project: "nope" }),
      headers: ADMIN,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("unknown_project");
    const forbidden = await request<ErrorBody>(`${h.url}/api/v1/alerts`, {
      body: alert({ project: "team-b" }),
      headers: OPERATOR,
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");
    const { items, total } = await listSessions(h.db.prisma, { pageSize: 200 });
    expect(total).toBe(before + 2);
    const byId = new Map(items.map((s) => [s.id, s.project]));
    expect(byId.get(plain.body.session_id as string)).toBe("team-a");
    expect(byId.get(named.body.session_id as string)).toBe("team-b");
  });

  it("lists only the caller's projects and answers 404, not 403, for a foreign session", async () => {
    const foreign = await seedSession(h.db.prisma, { project: "team-b" });
    const list = await request(`${h.url}/api/v1/sessions?page_size=200`, { headers: VIEWER });
    conforms(SessionListResponseSchema, list.body);
    const projects = new Set((list.body.sessions as { project: string }[]).map((s) => s.project));
    expect([...projects]).toEqual(["team-a"]);
    const detail = await request<ErrorBody>(`${h.url}/api/v1/sessions/${foreign.id}`, {
      headers: VIEWER,
    });
    expect(detail.status).toBe(404);
    expect(detail.body.error.code).toBe("not_found");
    // The summary and the polling surface apply the detail's check: 404 outside, 200 inside.
    const own = await seedSession(h.db.prisma, { project: "team-a" });
    for (const path of ["summary", "status"]) {
      const hidden = await request<ErrorBody>(`${h.url}/api/v1/sessions/${foreign.id}/${path}`, {
        headers: VIEWER,
      });
      expect(hidden.status).toBe(404);
      expect(hidden.body.error.code).toBe("not_found");
      const mine = await request(`${h.url}/api/v1/sessions/${own.id}/${path}`, {
        headers: VIEWER,
      });
      expect(mine.status).toBe(200);
    }
    const options = await request(`${h.url}/api/v1/sessions/filter-options`, { headers: VIEWER });
    expect(options.body.projects).toEqual(["team-a"]);
    const me = await request(`${h.url}/api/v1/auth/me`, { headers: VIEWER });
    conforms(AuthMeResponseSchema, me.body);
    expect(me.body.projects).toEqual([{ project: "team-a", actions: ["get"] }]);
  });
});

describe("the approve action", () => {
  it("a policy line granting approve is reported by /auth/me, and grants nothing else", async () => {
    const approver = as("april", "approvers-a");
    const me = await request(`${h.url}/api/v1/auth/me`, { headers: approver });
    expect(me.status).toBe(200);
    conforms(AuthMeResponseSchema, me.body);
    expect(me.body).toMatchObject({
      user: "april",
      groups: ["approvers-a"],
      projects: [{ project: "team-a", actions: ["approve"] }],
    });
    // No route checks approve yet (#30): it does not let the caller see or submit anything.
    const own = await seedSession(h.db.prisma, { project: "team-a" });
    const session = await request(`${h.url}/api/v1/sessions/${own.id}`, { headers: approver });
    expect(session.status).toBe(404);
    const submit = await request(`${h.url}/api/v1/alerts`, { body: alert(), headers: approver });
    expect(submit.status).toBe(403);
  });
});

describe("API tokens", () => {
  it("are created, used, listed and revoked through the CLI; a revoked token is refused", async () => {
    const created = await tarsy(
      ["token", "create", "--project", "team-a", "--role", "operator-a", "--ttl", "30d"],
      { TARSY_USER: "root" },
    );
    const token = created.stdout.trim();
    expect(token).toMatch(/^tarsy_/);
    const submit = await request(`${h.url}/api/v1/alerts`, {
      body: alert(),
      headers: bearer(token),
    });
    expect(submit.status).toBe(202);
    const listed = await tarsy(["token", "list", "--json"], { TARSY_USER: "root" });
    const info = JSON.parse(listed.stdout).tokens.find(
      (t: { name: string }) => t.name === "operator-a@team-a",
    );
    expect(info.last_used_at).not.toBeNull();
    expect(JSON.stringify(JSON.parse(listed.stdout))).not.toContain(token);
    // The CLI sends TARSY_TOKEN as the bearer.
    await tarsy(["session", "show", submit.body.session_id as string, "--json"], {
      TARSY_TOKEN: token,
    });
    await tarsy(["token", "revoke", info.id], { TARSY_USER: "root" });
    const after = await request<ErrorBody>(`${h.url}/api/v1/sessions`, { headers: bearer(token) });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("token_revoked");
  }, 120_000);

  it("refuses expired and malformed tokens, unknown roles and projects, and non-admins", async () => {
    const { token, hash } = newApiToken();
    await createApiToken(h.db.prisma, {
      name: "old",
      tokenHash: hash,
      project: "team-a",
      role: "viewer-a",
      createdBy: "test",
      expiresAt: new Date(Date.now() - 1000),
    });
    const expired = await request<ErrorBody>(`${h.url}/api/v1/sessions`, {
      headers: bearer(token),
    });
    expect(expired.body.error.code).toBe("token_expired");
    const bad = await request<ErrorBody>(`${h.url}/api/v1/sessions`, {
      headers: bearer("tarsy_short"),
    });
    expect([bad.status, bad.body.error.code]).toEqual([401, "invalid_token"]);
    const role = await request<ErrorBody>(`${h.url}/api/v1/tokens`, {
      body: { name: "x", project: "team-a", role: "nobody" },
      headers: ADMIN,
    });
    expect(role.status).toBe(400);
    const project = await request<ErrorBody>(`${h.url}/api/v1/tokens`, {
      body: { name: "x", project: "nope", role: "viewer-a" },
      headers: ADMIN,
    });
    expect([project.status, project.body.error.code]).toEqual([400, "unknown_project"]);
    const ok = await request(`${h.url}/api/v1/tokens`, {
      body: { name: "x", project: "team-a", role: "viewer-a", ttl: "1h" },
      headers: ADMIN,
    });
    expect(ok.status).toBe(201);
    conforms(ApiTokenCreatedSchema, ok.body);
  });
});

describe("Alertmanager projects", () => {
  const hook = (project?: string) => {
    const body = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8"));
    for (const [i, a] of body.alerts.entries()) {
      a.fingerprint = `${project ?? "none"}-${i}-${Date.now()}`;
      if (project) a.labels.tarsy_project = project;
    }
    return body;
  };
  const send = (body: unknown, headers: Record<string, string> = bearer(WEBHOOK_TOKEN)) =>
    request<{
      sessions_created: { project: string }[];
      alerts_skipped: { reason: string }[];
      error?: { code: string };
    }>(`${h.url}/api/v1/alerts/alertmanager`, { body, headers });

  it("maps the label's project, the receiver's own, refuses a forbidden (403) or unknown (400) one whole, takes an API token", async () => {
    const own = await send(hook());
    expect(own.body.sessions_created.map((s) => s.project)).toEqual(["team-a", "team-a"]);
    const labelled = await send(hook("team-b"));
    expect(labelled.body.sessions_created.map((s) => s.project)).toEqual(["team-b", "team-b"]);
    // A project the receiver may not create in refuses the notification whole, storing nothing.
    const before = (await listSessions(h.db.prisma)).total;
    const forbidden = await send(hook("team-c"));
    expect([forbidden.status, forbidden.body.error?.code]).toEqual([403, "forbidden"]);
    expect((await listSessions(h.db.prisma)).total).toBe(before);
    // A project that is not configured refuses it whole too: 400, naming project and alert.
    const unknownHook = hook("nope");
    const unknown = await request<ErrorBody>(`${h.url}/api/v1/alerts/alertmanager`, {
      body: unknownHook,
      headers: bearer(WEBHOOK_TOKEN),
    });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, "unknown_project"]);
    const fingerprints = unknownHook.alerts.map((a: { fingerprint: string }) => a.fingerprint);
    expect(unknown.body.error.message).toContain(`'nope' (alert ${fingerprints[0]})`);
    expect(unknown.body.error.details).toMatchObject({
      projects: ["nope"],
      alerts: fingerprints.map((fingerprint: string) => ({ fingerprint, project: "nope" })),
    });
    // One alert of a notification in an unknown project: none of the others is stored either.
    const mixed = hook("team-b");
    mixed.alerts[1].labels.tarsy_project = "nope";
    const refused = await request<ErrorBody>(`${h.url}/api/v1/alerts/alertmanager`, {
      body: mixed,
      headers: bearer(WEBHOOK_TOKEN),
    });
    expect([refused.status, refused.body.error.code]).toEqual([400, "unknown_project"]);
    expect((await listSessions(h.db.prisma)).total).toBe(before);
    const { token, hash } = newApiToken();
    await createApiToken(h.db.prisma, {
      name: "am-b",
      tokenHash: hash,
      project: "team-b",
      role: "admin",
      createdBy: "test",
      expiresAt: null,
    });
    const viaToken = await send(hook(), bearer(token));
    expect(viaToken.body.sessions_created.map((s) => s.project)).toEqual(["team-b", "team-b"]);
  });
});

describe("audit", () => {
  it("records denials and state changes; only a global admin reads it", async () => {
    const denied = await request(`${h.url}/api/v1/system/config`, { headers: VIEWER });
    expect(denied.status).toBe(403);
    const refused = await request(`${h.url}/api/v1/audit`, { headers: OPERATOR });
    expect(refused.status).toBe(403);
    await eventually(async () => {
      const res = await request(`${h.url}/api/v1/audit?actor=vera&outcome=denied`, {
        headers: ADMIN,
      });
      const entries = (res.body.entries ?? []) as { path: string; status: number }[];
      return entries.some((e) => e.path === "/api/v1/system/config" && e.status === 403);
    });
    const res = await request(`${h.url}/api/v1/audit?limit=500`, { headers: ADMIN });
    conforms(AuditListResponseSchema, res.body);
    const entries = res.body.entries as { action: string; outcome: string; method: string }[];
    expect(entries.some((e) => e.method === "POST" && e.outcome === "allowed")).toBe(true);
  });
});
