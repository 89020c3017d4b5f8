import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { newApiToken } from "@tarsy/authz";
import { createApiToken, getApiToken, listApiTokens, listAudit, listSessions } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSession, startSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

/**
 * What the matrix cannot show: the other project's sessions and tokens, the audit entry of
 * each state-changing call (who, from where, when), and the bodies of identity refusals.
 */

const PEER = "x-test-peer";
const as = (user: string, groups: string) => ({
  "x-forwarded-user": user,
  "x-forwarded-groups": groups,
});
const ADMIN = as("adam", "admins");
const ADMIN_A = as("ada", "admins-a");
const OPERATOR = as("olga", "operators-a");

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ configDir: AUTHZ_CONFIG_DIR, peerHeader: PEER });
});
afterAll(async () => {
  await h?.close();
});

describe("another project's sessions", () => {
  it("/sessions/active lists only the caller's projects", async () => {
    const a = await seedSession(h.db.prisma, { project: "team-a" });
    const b = await seedSession(h.db.prisma, { project: "team-b" });
    const aRunning = await seedSession(h.db.prisma, { project: "team-a" });
    const bRunning = await seedSession(h.db.prisma, { project: "team-b" });
    await startSession(h.db.prisma, aRunning.id);
    await startSession(h.db.prisma, bRunning.id);
    const ids = (body: Record<string, unknown>) =>
      Object.values(body)
        .filter(Array.isArray)
        .flat()
        .map((s) => (s as { id?: string; session_id?: string }).id ?? "");
    const mine = await request(`${h.url}/api/v1/sessions/active`, { headers: OPERATOR });
    expect(mine.status).toBe(200);
    expect(ids(mine.body)).toEqual(expect.arrayContaining([a.id, aRunning.id]));
    expect(ids(mine.body)).not.toContain(b.id);
    expect(ids(mine.body)).not.toContain(bRunning.id);
    // The admin's view has both: the filter is the caller's, not the data's.
    const all = await request(`${h.url}/api/v1/sessions/active`, { headers: ADMIN });
    expect(ids(all.body)).toEqual(expect.arrayContaining([a.id, b.id, aRunning.id, bRunning.id]));
  });

  it("answers 404 for its timeline, trace, cancel and chat, and does nothing", async () => {
    const foreign = await seedSession(h.db.prisma, { project: "team-b" });
    await startSession(h.db.prisma, foreign.id);
    const id = foreign.id;
    const calls: [string, string, unknown?][] = [
      ["GET", `/api/v1/sessions/${id}/timeline`],
      ["GET", `/api/v1/sessions/${id}/trace`],
      ["GET", `/api/v1/sessions/${id}/trace/llm/${crypto.randomUUID()}`],
      ["GET", `/api/v1/sessions/${id}/trace/mcp/${crypto.randomUUID()}`],
      ["POST", `/api/v1/sessions/${id}/cancel`],
      ["POST", `/api/v1/sessions/${id}/chat/messages`, { content: "why?" }],
    ];
    for (const [method, path, body] of calls) {
      const res = await request<ErrorBody>(`${h.url}${path}`, { method, body, headers: OPERATOR });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, "not_found"]);
      expect(res.body.error.message).toBe(`session ${id} not found`);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(h.received.cancelRequested.filter((m) => m.session_id === id)).toEqual([]);
    expect(h.received.chatSubmitted.filter((m) => m.session_id === id)).toEqual([]);
  });
});

describe("audit entries", () => {
  it("carry who, the caller's address and the time for cancel, chat, token create and revoke, and a 401", async () => {
    const t0 = new Date(Date.now() - 1000);
    const own = await seedSession(h.db.prisma, { project: "team-a" });
    await startSession(h.db.prisma, own.id);
    const cancel = await request(`${h.url}/api/v1/sessions/${own.id}/cancel`, {
      method: "POST",
      headers: OPERATOR,
    });
    expect(cancel.status).toBeLessThan(500);
    const chat = await request(`${h.url}/api/v1/sessions/${own.id}/chat/messages`, {
      body: { content: "why?" },
      headers: OPERATOR,
    });
    expect(chat.status).toBeLessThan(500);
    const created = await request(`${h.url}/api/v1/tokens`, {
      body: { name: "audited", project: "team-a", role: "viewer-a", ttl: "1h" },
      headers: ADMIN,
    });
    expect(created.status).toBe(201);
    const revoked = await request(`${h.url}/api/v1/tokens/${created.body.id}`, {
      method: "DELETE",
      headers: ADMIN,
    });
    expect(revoked.status).toBe(204);
    const anonymous = await request(`${h.url}/api/v1/sessions/${own.id}/cancel`, {
      method: "POST",
    });
    expect(anonymous.status).toBe(401);
    const wanted: [string, string, string, number][] = [
      ["olga", "POST", `/api/v1/sessions/${own.id}/cancel`, cancel.status],
      ["olga", "POST", `/api/v1/sessions/${own.id}/chat/messages`, chat.status],
      ["adam", "POST", "/api/v1/tokens", 201],
      ["adam", "DELETE", `/api/v1/tokens/${created.body.id}`, 204],
      ["anonymous", "POST", `/api/v1/sessions/${own.id}/cancel`, 401],
    ];
    const find = async () => {
      const rows = await listAudit(h.db.prisma, { limit: 200 });
      return wanted.map(([actor, method, path, status]) =>
        rows.find(
          (r) => r.actor === actor && r.method === method && r.path === path && r.status === status,
        ),
      );
    };
    await eventually(async () => (await find()).every(Boolean));
    const t1 = new Date(Date.now() + 1000);
    for (const [i, row] of (await find()).entries()) {
      expect(row?.remoteAddr, String(wanted[i])).toBe("127.0.0.1");
      expect(row?.at.getTime(), String(wanted[i])).toBeGreaterThanOrEqual(t0.getTime());
      expect(row?.at.getTime(), String(wanted[i])).toBeLessThanOrEqual(t1.getTime());
    }
    const [cancelRow, chatRow, , , denied] = await find();
    expect(cancelRow).toMatchObject({ action: "cancel", sessionId: own.id, project: "team-a" });
    expect(chatRow).toMatchObject({ action: "update", sessionId: own.id, project: "team-a" });
    expect(denied).toMatchObject({ outcome: "denied", identitySource: "none" });
  });
});

describe("identity refusals", () => {
  it("answers identity headers from an untrusted address with 401 untrusted_identity", async () => {
    const res = await request<ErrorBody>(`${h.url}/api/v1/sessions`, {
      headers: { ...ADMIN, [PEER]: "203.0.113.9" },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("untrusted_identity");
    expect(res.body.error.message).toMatch(/203\.0\.113\.9.*not a trusted proxy/);
  });
});

describe("identity refusals with authorization off", () => {
  let off: Harness;
  beforeAll(async () => {
    off = await startHarness({ peerHeader: PEER });
  });
  afterAll(async () => {
    await off?.close();
  });

  it("still answers identity headers from an untrusted address with 401 untrusted_identity, storing nothing", async () => {
    expect(off.deps.access.authorizer.enabled).toBe(false);
    const spoofed = { ...ADMIN, [PEER]: "203.0.113.9" };
    const res = await request<ErrorBody>(`${off.url}/api/v1/sessions`, { headers: spoofed });
    expect([res.status, res.body.error.code]).toEqual([401, "untrusted_identity"]);
    expect(res.body.error.message).toMatch(/203\.0\.113\.9.*not a trusted proxy/);
    const submit = await request<ErrorBody>(`${off.url}/api/v1/alerts`, {
      body: { alert_type: "kubernetes", data: "spoofed" },
      headers: spoofed,
    });
    expect([submit.status, submit.body.error.code]).toEqual([401, "untrusted_identity"]);
    expect((await listSessions(off.db.prisma)).total).toBe(0);
    // The same headers from a trusted proxy are read.
    const trusted = await request(`${off.url}/api/v1/sessions`, { headers: ADMIN });
    expect(trusted.status).toBe(200);
  });
});

describe("API tokens at rest", () => {
  it("stores only the SHA-256 of a created token: its text is nowhere in the database, even after use", async () => {
    const created = await request<{ id: string; token: string }>(`${h.url}/api/v1/tokens`, {
      body: { name: "at-rest", project: "team-a", role: "viewer-a", ttl: "1d" },
      headers: ADMIN,
    });
    expect(created.status).toBe(201);
    const { id, token } = created.body;
    expect(token).toMatch(/^tarsy_/);
    // Used once, so its last use and an audit row are written too.
    const me = await request(`${h.url}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(me.status).toBe(200);
    await eventually(async () => (await getApiToken(h.db.prisma, id))?.lastUsedAt != null);
    const row = await getApiToken(h.db.prisma, id);
    const sha256 = createHash("sha256").update(token).digest("hex");
    expect(row?.tokenHash).toBe(sha256);
    // Every table's data, as a backup would hold it: the hash is there, the token is not.
    const { stdout: dump } = await promisify(execFile)(
      "pg_dump",
      ["--data-only", h.testDb.database.url],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    expect(dump).toContain(sha256);
    expect(dump).toContain("at-rest");
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice("tarsy_".length));
  });
});

describe("API tokens by project", () => {
  it("a project's admin manages its tokens only; a refused create writes no row", async () => {
    const { hash } = newApiToken();
    const other = await createApiToken(h.db.prisma, {
      name: "b-token",
      tokenHash: hash,
      project: "team-b",
      role: "viewer-a",
      createdBy: "test",
      expiresAt: null,
    });
    const before = (await listApiTokens(h.db.prisma)).length;
    const foreign = await request<ErrorBody>(`${h.url}/api/v1/tokens`, {
      body: { name: "x", project: "team-b", role: "viewer-a" },
      headers: ADMIN_A,
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "forbidden"]);
    for (const body of [
      { name: "x", project: "team-a", role: "nobody" },
      { name: "x", project: "nope", role: "viewer-a" },
    ]) {
      const refused = await request(`${h.url}/api/v1/tokens`, { body, headers: ADMIN });
      expect(refused.status).toBe(400);
    }
    expect((await listApiTokens(h.db.prisma)).length).toBe(before);
    const revoke = await request<ErrorBody>(`${h.url}/api/v1/tokens/${other.id}`, {
      method: "DELETE",
      headers: ADMIN_A,
    });
    expect(revoke.status).toBe(404);
    expect((await getApiToken(h.db.prisma, other.id))?.revokedAt).toBeNull();
    const listed = await request<{ tokens: { project: string }[] }>(`${h.url}/api/v1/tokens`, {
      headers: ADMIN_A,
    });
    expect(listed.status).toBe(200);
    expect(new Set(listed.body.tokens.map((t) => t.project))).toEqual(new Set(["team-a"]));
    // Its own project: created, with the expiry its ttl gives.
    const start = Date.now();
    const mine = await request<{ project: string; expires_at: string }>(`${h.url}/api/v1/tokens`, {
      body: { name: "a-token", project: "team-a", role: "viewer-a", ttl: "2d" },
      headers: ADMIN_A,
    });
    expect(mine.status).toBe(201);
    const expires = new Date(mine.body.expires_at).getTime();
    expect(expires).toBeGreaterThanOrEqual(start + 2 * 86_400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 2 * 86_400_000);
  });
});
