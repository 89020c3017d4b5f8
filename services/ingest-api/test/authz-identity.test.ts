import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listSessions } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSession, startSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  type ErrorBody,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

/**
 * Identity as the service reads it, beyond oauth2-proxy's default headers: kube-rbac-proxy's
 * `X-Remote-User` / `X-Remote-Group`, a groups claim other than `groups`, and authorization
 * enabled with no policy at all (nobody may do anything).
 */

type SessionList = { sessions: { id: string; project: string }[] };
const alert = { alert_type: "KubePodCrashLooping", data: { pod: "api" } };

/** The fixture config with one edit (which must apply), in a directory of its own. */
function editedFixture(edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-authz-identity-"));
  cpSync(AUTHZ_CONFIG_DIR, dir, { recursive: true });
  const file = join(dir, "tarsy.yaml");
  const text = readFileSync(file, "utf8");
  const edited = edit(text);
  if (edited === text) throw new Error("the fixture edit did not apply");
  writeFileSync(file, edited);
  return dir;
}

describe("kube-rbac-proxy's headers", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("X-Remote-User and X-Remote-Group identify the caller and their groups' roles apply", async () => {
    const kim = { "x-remote-user": "kim", "x-remote-group": "viewers-b, operators-a" };
    const own = await seedSession(h.db.prisma, { project: "team-a" });
    const foreign = await seedSession(h.db.prisma, { project: "team-b" });
    const me = await request(`${h.url}/api/v1/auth/me`, { headers: kim });
    expect(me.body).toMatchObject({
      user: "kim",
      groups: ["viewers-b", "operators-a"],
      source: "proxy",
      projects: [{ project: "team-a", actions: ["get", "create", "update", "cancel", "delete"] }],
    });
    const list = await request<SessionList>(`${h.url}/api/v1/sessions?page_size=200`, {
      headers: kim,
    });
    expect(list.body.sessions.map((s) => s.id)).toContain(own.id);
    expect(list.body.sessions.map((s) => s.id)).not.toContain(foreign.id);
    const hidden = await request<ErrorBody>(`${h.url}/api/v1/sessions/${foreign.id}`, {
      headers: kim,
    });
    expect([hidden.status, hidden.body.error.code]).toEqual([404, "not_found"]);
    const submit = await request<{ session_id: string }>(`${h.url}/api/v1/alerts`, {
      body: alert,
      headers: kim,
    });
    expect(submit.status).toBe(202);
    const { items } = await listSessions(h.db.prisma, { pageSize: 200 });
    expect(items.find((s) => s.id === submit.body.session_id)).toMatchObject({
      project: "team-a",
      author: "kim",
    });
    // The user alone, without a group the policy names: nothing.
    const bare = await request(`${h.url}/api/v1/alerts`, {
      body: alert,
      headers: { "x-remote-user": "kim" },
    });
    expect(bare.status).toBe(403);
  });
});

describe("a groups claim other than `groups`", () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = editedFixture((text) =>
      text.replace("  enabled: true\n", "  enabled: true\n  scopes: roles\n"),
    );
    h = await startHarness({ configDir: dir });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the caller's groups from X-Forwarded-Roles, not X-Forwarded-Groups", async () => {
    expect(h.deps.config.authorization.scopes).toBe("roles");
    const viaRoles = { "x-forwarded-user": "adam", "x-forwarded-roles": "admins" };
    const viaGroups = { "x-forwarded-user": "adam", "x-forwarded-groups": "admins" };
    const config = await request(`${h.url}/api/v1/system/config`, { headers: viaRoles });
    expect(config.status).toBe(200);
    const me = await request(`${h.url}/api/v1/auth/me`, { headers: viaRoles });
    expect(me.body).toMatchObject({ user: "adam", groups: ["admins"] });
    const refused = await request<ErrorBody>(`${h.url}/api/v1/system/config`, {
      headers: viaGroups,
    });
    expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"]);
    const nobody = await request(`${h.url}/api/v1/auth/me`, { headers: viaGroups });
    expect(nobody.body).toMatchObject({ user: "adam", groups: [], projects: [] });
  });
});

describe("enabled with an empty policy", () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = editedFixture((text) => text.replace(/ {2}policy: \|\n[\s\S]*$/, '  policy: ""\n'));
    h = await startHarness({ configDir: dir });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives even the admin group nothing: 403 for what it would do, empty lists, nothing stored", async () => {
    expect(h.deps.config.authorization).toMatchObject({ enabled: true, policy: "" });
    const admin = { "x-forwarded-user": "adam", "x-forwarded-groups": "admins" };
    const existing = await seedSession(h.db.prisma, { project: "team-a" });
    await startSession(h.db.prisma, existing.id);
    const list = await request<SessionList>(`${h.url}/api/v1/sessions`, { headers: admin });
    expect([list.status, list.body.sessions]).toEqual([200, []]);
    const active = await request(`${h.url}/api/v1/sessions/active`, { headers: admin });
    expect(active.status).toBe(200);
    expect(JSON.stringify(active.body)).not.toContain(existing.id);
    const detail = await request(`${h.url}/api/v1/sessions/${existing.id}`, { headers: admin });
    expect(detail.status).toBe(404);
    for (const path of ["/api/v1/system/config", "/api/v1/audit", "/api/v1/tokens"]) {
      const res = await request<ErrorBody>(`${h.url}${path}`, { headers: admin });
      expect([path, res.status, res.body.error.code]).toEqual([path, 403, "forbidden"]);
    }
    const submit = await request<ErrorBody>(`${h.url}/api/v1/alerts`, {
      body: alert,
      headers: admin,
    });
    expect([submit.status, submit.body.error.code]).toEqual([403, "forbidden"]);
    expect((await listSessions(h.db.prisma)).total).toBe(1);
    const me = await request(`${h.url}/api/v1/auth/me`, { headers: admin });
    expect(me.body).toMatchObject({ enabled: true, user: "adam", projects: [] });
  });
});
