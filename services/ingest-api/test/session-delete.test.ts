import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  ActiveSessionsResponseSchema,
  AuditListResponseSchema,
  FilterOptionsResponseSchema,
  SESSIONS_EVENTS_SUBJECT,
  SessionDeleteResponseSchema,
  type SessionListResponse,
  sessionEventsSubject,
} from "@tarsy/contracts";
import { countStoredRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishSession, seedInvestigation, seedSession, startSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const CLI = fileURLToPath(new URL("../../../packages/cli/bin/tarsy.mjs", import.meta.url));

/** The real `tarsy` executable against `url`: exit code, stdout, stderr. */
const tarsy = (url: string, args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "", TARSY_API_URL: url } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
const del = (h: Harness, id: string, headers: Record<string, string> = {}) =>
  request<ErrorBody & { session_id: string; deleted_at: string }>(
    `${h.url}/api/v1/sessions/${id}`,
    { method: "DELETE", headers },
  );

describe("DELETE /api/v1/sessions/:id (authorization off)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("soft-deletes an ended session: 200, its session.deleted on both channels, and it is gone from every list, search and lookup", async () => {
    const { session, ref } = await seedInvestigation(h.db.prisma);
    const id = session.id;
    const other = await seedSession(h.db.prisma, { data: "pod api-1 OOMKilled too" });
    // A session whose alert type and chain only it has: they leave the filter options with it.
    const lone = await seedSession(h.db.prisma, { alertType: "lone-type", chainId: "lone-chain" });
    await finishSession(h.db.prisma, lone.id, "timed_out");
    await finishSession(h.db.prisma, other.id);
    const ids = async (query: string) =>
      (await request<SessionListResponse>(`${h.url}/api/v1/sessions?${query}`)).body.sessions.map(
        (s) => s.id,
      );
    expect(await ids("search=OOMKilled")).toContain(id);
    expect((await request(`${h.url}/api/v1/sessions/${id}/trace`)).status).toBe(200);

    const unpublishedBefore = (await countStoredRows(h.db.prisma)).unpublishedOutbox;
    const res = await del(h, id);
    expect(res.status).toBe(200);
    conforms(SessionDeleteResponseSchema, res.body);
    expect(res.body.session_id).toBe(id);
    expect(Date.parse(res.body.deleted_at)).toBeLessThanOrEqual(Date.now());

    // The event went out (through the outbox, published before the response).
    for (const subject of [sessionEventsSubject(id), SESSIONS_EVENTS_SUBJECT]) {
      const { events } = await h.bus.replayEvents({ subject, afterSeq: 0, limit: 1_000 });
      const deleted = events.filter((e) => e.payload.type === "session.deleted");
      expect(
        deleted.map((e) => e.payload.session_id),
        subject,
      ).toEqual([id]);
    }
    // …and its outbox row is marked published: nothing new waits for the relay.
    expect((await countStoredRows(h.db.prisma)).unpublishedOutbox).toBe(unpublishedBefore);

    // Gone from lists, search and filter options; the other session stays.
    expect(await ids("page_size=1000")).not.toContain(id);
    expect(await ids("search=OOMKilled")).toEqual([other.id]);
    expect(await ids("status=completed")).not.toContain(id);
    const active = await request(`${h.url}/api/v1/sessions/active`);
    conforms(ActiveSessionsResponseSchema, active.body);
    expect(JSON.stringify(active.body)).not.toContain(id);
    const options = async () => {
      const res = await request<{ alert_types: string[]; chain_ids: string[] }>(
        `${h.url}/api/v1/sessions/filter-options`,
      );
      conforms(FilterOptionsResponseSchema, res.body);
      return res.body;
    };
    expect(await options()).toMatchObject({
      alert_types: expect.arrayContaining(["lone-type"]),
      chain_ids: expect.arrayContaining(["lone-chain"]),
    });
    expect((await del(h, lone.id)).status).toBe(200);
    const after = await options();
    expect(after.alert_types).not.toContain("lone-type");
    expect(after.chain_ids).not.toContain("lone-chain");

    // Every lookup and sub-resource: 404.
    const base = `${h.url}/api/v1/sessions/${id}`;
    for (const path of ["", "/summary", "/status", "/timeline", "/trace"]) {
      const r = await request<ErrorBody>(`${base}${path}`);
      expect([path, r.status, r.body.error?.code]).toEqual([path, 404, "not_found"]);
    }
    const chat = await request<ErrorBody>(`${base}/chat/messages`, { body: { content: "why?" } });
    expect(chat.status).toBe(404);
    const cancel = await request<ErrorBody>(`${base}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(404);
    expect(ref.stageId).toBeTruthy();

    // Deleting again, or something that never existed: 404.
    expect((await del(h, id)).status).toBe(404);
    expect((await del(h, UNKNOWN)).body.error.code).toBe("not_found");
    expect((await del(h, "not-a-uuid")).status).toBe(404);
  });

  it("refuses a session that has not ended (409 session_active), changing nothing", async () => {
    const pending = await seedSession(h.db.prisma);
    const running = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, running.id);
    for (const [s, status] of [
      [pending, "pending"],
      [running, "in_progress"],
    ] as const) {
      const res = await del(h, s.id);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("session_active");
      expect(res.body.error.details).toEqual({ status });
      expect((await request(`${h.url}/api/v1/sessions/${s.id}`)).status).toBe(200);
    }
    const { events } = await h.bus.replayEvents({
      subject: sessionEventsSubject(running.id),
      afterSeq: 0,
      limit: 100,
    });
    expect(events.some((e) => e.payload.type === "session.deleted")).toBe(false);
  });
});

describe("tarsy session delete", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("deletes an ended session (exit 0); says plainly when it is unknown or still running (exit 1)", async () => {
    const done = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, done.id, "failed");
    const running = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, running.id);

    const ok = await tarsy(h.url, ["session", "delete", done.id]);
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect(ok.stdout).toMatch(new RegExp(`^session ${done.id}: deleted at \\d{4}-.+Z\n$`));
    expect((await request(`${h.url}/api/v1/sessions/${done.id}`)).status).toBe(404);

    const again = await tarsy(h.url, ["session", "delete", done.id, "--json"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^tarsy session delete: no session ${done.id} `));
    const active = await tarsy(h.url, ["session", "delete", running.id]);
    expect(active.code).toBe(1);
    expect(active.stderr).toMatch(
      /^tarsy session delete: the session is still running: session .+ is in_progress/,
    );
    expect((await request(`${h.url}/api/v1/sessions/${running.id}`)).status).toBe(200);

    const json = await (async () => {
      const s = await seedSession(h.db.prisma);
      await finishSession(h.db.prisma, s.id, "cancelled");
      return { id: s.id, run: await tarsy(h.url, ["session", "delete", s.id, "-o", "json"]) };
    })();
    expect(json.run.code).toBe(0);
    conforms(SessionDeleteResponseSchema, JSON.parse(json.run.stdout));
    expect(JSON.parse(json.run.stdout).session_id).toBe(json.id);
    expect((await tarsy(h.url, ["session", "delete"])).code).toBe(2);
    // Five runs of the CLI: room for a loaded machine (the bound is for a hang).
  }, 120_000);
});

describe("DELETE /api/v1/sessions/:id (authorization on)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  });
  afterAll(async () => {
    await h?.close();
  });
  const as = (user: string, groups: string) => ({
    "x-forwarded-user": user,
    "x-forwarded-groups": groups,
  });
  const VIEWER = as("vera", "viewers-a");
  const OPERATOR = as("olga", "operators-a");
  const ADMIN = as("adam", "admins");

  const ended = async (project: string) => {
    const s = await seedSession(h.db.prisma, { project });
    await finishSession(h.db.prisma, s.id);
    return s.id;
  };

  it("an operator may delete in their project (audited); a viewer gets 403, another project 404", async () => {
    const a = await ended("team-a");
    const b = await ended("team-b");
    const denied = await del(h, a, VIEWER);
    expect([denied.status, denied.body.error.code]).toEqual([403, "forbidden"]);
    const hidden = await del(h, b, OPERATOR);
    expect([hidden.status, hidden.body.error.code]).toEqual([404, "not_found"]);
    expect((await request(`${h.url}/api/v1/sessions/${b}`, { headers: ADMIN })).status).toBe(200);

    const ok = await del(h, a, OPERATOR);
    expect(ok.status).toBe(200);
    expect((await request(`${h.url}/api/v1/sessions/${a}`, { headers: OPERATOR })).status).toBe(
      404,
    );

    // The audit log has the denial and the deletion, with the session and project.
    let entries: Array<Record<string, unknown>> = [];
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const audit = await request<{ entries: Array<Record<string, unknown>> }>(
        `${h.url}/api/v1/audit`,
        { headers: ADMIN },
      );
      conforms(AuditListResponseSchema, audit.body);
      entries = audit.body.entries.filter((e) => e.session_id === a && e.method === "DELETE");
      if (entries.length >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(entries.map((e) => [e.actor, e.action, e.outcome, e.status, e.project]).sort()).toEqual([
      ["olga", "delete", "allowed", 200, "team-a"],
      ["vera", "delete", "denied", 403, "team-a"],
    ]);
  });
});
