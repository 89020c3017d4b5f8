import type {
  ActiveSessionsResponse,
  SessionDetail,
  SessionListResponse,
  TimelineResponse,
} from "@tarsy/contracts";
import {
  ActiveSessionsResponseSchema,
  CancelResponseSchema,
  FilterOptionsResponseSchema,
  SessionDetailSchema,
  SessionListResponseSchema,
  TimelineResponseSchema,
} from "@tarsy/contracts";
import { getSession, refreshSessionTokens, transitionExecutionStatus } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  finishSession,
  seedInvestigation,
  seedSession,
  softDeleteSession,
  startSession,
} from "./seed.ts";
import {
  conforms,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const list = (query: string) => request<SessionListResponse>(`${h.url}/api/v1/sessions?${query}`);
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe("session list, active sessions, filter options", () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const db = h.db.prisma;
    ids.a = (await seedSession(db, { data: "disk full on node-3" })).id;
    ids.b = (await seedSession(db, { alertType: "quiet", chainId: "quiet-chain" })).id;
    ids.c = (await seedSession(db, { data: "certificate expired" })).id;
    ids.d = (
      await seedSession(db, { alertType: "KubePodCrashLooping", chainId: "crashloop-chain" })
    ).id;
    ids.gone = (await seedSession(db, { data: "deleted one" })).id;
    await startSession(db, ids.b);
    await finishSession(db, ids.c, "completed", {
      finalAnalysis: "Renew the TLS cert for ingress",
    });
    await softDeleteSession(db, ids.gone);
  });

  it("lists newest first with pagination and never shows deleted sessions", async () => {
    const page1 = await list("page_size=2");
    expect(page1.status).toBe(200);
    conforms(SessionListResponseSchema, page1.body);
    expect(page1.body.pagination).toEqual({ page: 1, page_size: 2, total: 4, total_pages: 2 });
    expect(page1.body.sessions.map((s) => s.id)).toEqual([ids.d, ids.c]);
    const page2 = await list("page_size=2&page=2");
    expect(page2.body.sessions.map((s) => s.id)).toEqual([ids.b, ids.a]);
    expect(page1.body.sessions[1]).toMatchObject({ status: "completed", has_final_analysis: true });
  });

  it("filters by status, alert type, chain, date range and free text", async () => {
    expect(
      (await list("status=pending,in_progress")).body.sessions.map((s) => s.id).sort(),
    ).toEqual([ids.a, ids.b, ids.d].sort());
    expect((await list("alert_type=quiet")).body.sessions.map((s) => s.id)).toEqual([ids.b]);
    expect((await list("chain_id=crashloop-chain")).body.sessions.map((s) => s.id)).toEqual([
      ids.d,
    ]);
    expect((await list("search=DISK%20FULL")).body.sessions.map((s) => s.id)).toEqual([ids.a]);
    expect((await list("search=tls%20cert")).body.sessions.map((s) => s.id)).toEqual([ids.c]);
    expect((await list("search=deleted%20one")).body.sessions).toEqual([]);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await list(`from=${encodeURIComponent(future)}`)).body.pagination.total).toBe(0);
    expect((await list(`to=${encodeURIComponent(future)}`)).body.pagination.total).toBe(4);
  });

  it("sorts by a chosen field and order", async () => {
    const asc = await list("sort_by=created_at&sort_order=asc");
    expect(asc.body.sessions.map((s) => s.id)).toEqual([ids.a, ids.b, ids.c, ids.d]);
    const byType = await list("sort_by=alert_type&sort_order=asc");
    expect(byType.body.sessions.map((s) => s.alert_type)).toEqual([
      "KubePodCrashLooping",
      "kubernetes",
      "kubernetes",
      "quiet",
    ]);
  });

  it("rejects bad query parameters with 400 naming each one", async () => {
    const res = await request<{ error: { code: string; details: { fields: { path: string }[] } } }>(
      `${h.url}/api/v1/sessions?status=bogus&page_size=1001&sort_by=nope&from=yesterday`,
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.map((f) => f.path).sort()).toEqual(
      ["from", "page_size", "sort_by", "status.0"].sort(),
    );
  });

  it("shows running sessions as active and pending ones as queued (oldest first)", async () => {
    const res = await request<ActiveSessionsResponse>(`${h.url}/api/v1/sessions/active`);
    conforms(ActiveSessionsResponseSchema, res.body);
    expect(res.body.active.map((s) => s.id)).toEqual([ids.b]);
    expect(res.body.queued.map((s) => s.id)).toEqual([ids.a, ids.d]);
  });

  it("offers filter options from the stored sessions", async () => {
    const res = await request<{ statuses: string[]; alert_types: string[]; chain_ids: string[] }>(
      `${h.url}/api/v1/sessions/filter-options`,
    );
    conforms(FilterOptionsResponseSchema, res.body);
    expect(res.body.statuses).toContain("timed_out");
    expect(res.body.alert_types).toEqual(["KubePodCrashLooping", "kubernetes", "quiet"]);
    expect(res.body.chain_ids).toEqual([
      "crashloop-chain",
      "kubernetes-agent-chain",
      "quiet-chain",
    ]);
  });
});

describe("session detail and timeline", () => {
  it("returns stages, executions, analysis, summary, chat and token usage", async () => {
    const { session, stage, execution } = await seedInvestigation(h.db.prisma);
    await transitionExecutionStatus(h.db.prisma, execution.id, ["pending"], "completed", {
      inputTokens: 120,
      outputTokens: 30,
      totalTokens: 150,
    });
    await refreshSessionTokens(h.db.prisma, session.id);
    const res = await request<SessionDetail>(`${h.url}/api/v1/sessions/${session.id}`);
    expect(res.status).toBe(200);
    conforms(SessionDetailSchema, res.body);
    expect(res.body).toMatchObject({
      id: session.id,
      status: "completed",
      alert_data: "pod api-1 OOMKilled",
      final_analysis: "The pod ran out of memory.",
      executive_summary: "OOM in api-1",
      chat_enabled: true,
      chat: null,
      token_usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150, thinking_tokens: 0 },
    });
    expect(res.body.stages).toHaveLength(1);
    expect(res.body.stages[0]).toMatchObject({
      id: stage.id,
      stage_name: "investigate",
      stage_index: 1,
    });
    expect(res.body.stages[0]?.executions[0]).toMatchObject({
      id: execution.id,
      agent_name: "KubernetesAgent",
      status: "completed",
      llm_backend: "google-native",
      token_usage: { total_tokens: 150 },
    });
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("returns the timeline ordered by sequence number", async () => {
    const { session } = await seedInvestigation(h.db.prisma);
    const res = await request<TimelineResponse>(`${h.url}/api/v1/sessions/${session.id}/timeline`);
    expect(res.status).toBe(200);
    conforms(TimelineResponseSchema, res.body);
    expect(res.body.events.map((e) => [e.sequence_number, e.event_type])).toEqual([
      [1, "llm_thinking"],
      [2, "llm_tool_call"],
      [3, "final_analysis"],
      [4, "executive_summary"],
    ]);
    expect(res.body.events[3]?.stage_id).toBeNull();
  });

  it("answers 404 for unknown, malformed and soft-deleted ids", async () => {
    const gone = await seedSession(h.db.prisma);
    await softDeleteSession(h.db.prisma, gone.id);
    for (const path of [
      `/api/v1/sessions/${UNKNOWN}`,
      "/api/v1/sessions/not-a-uuid",
      `/api/v1/sessions/${gone.id}`,
      `/api/v1/sessions/${gone.id}/timeline`,
      `/api/v1/sessions/${UNKNOWN}/timeline`,
    ]) {
      const res = await request<ErrorBody>(`${h.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("cancel", () => {
  it("sends a cancel request for a running session", async () => {
    const s = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, s.id);
    const res = await request<{ session_id: string; status: string }>(
      `${h.url}/api/v1/sessions/${s.id}/cancel`,
      { method: "POST", headers: { "X-Forwarded-User": "carol" } },
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ session_id: s.id, status: "cancel_requested" });
    conforms(CancelResponseSchema, res.body);
    await eventually(() => h.received.cancelRequested.some((m) => m.session_id === s.id));
    expect(h.received.cancelRequested.find((m) => m.session_id === s.id)?.requested_by).toBe(
      "carol",
    );
  });

  const cancel = (id: string, init: Parameters<typeof request>[1] = {}) =>
    request<ErrorBody & { status: string }>(`${h.url}/api/v1/sessions/${id}/cancel`, {
      method: "POST",
      ...init,
    });
  const cancelOf = (id: string) => h.received.cancelRequested.find((m) => m.session_id === id);

  it("sends the reason (trimmed) with the caller as the canceller", async () => {
    const s = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, s.id);
    const res = await cancel(s.id, {
      body: { reason: "  duplicate of INC-123\n" },
      headers: { "X-Forwarded-User": "alice" },
    });
    expect(res.status).toBe(202);
    conforms(CancelResponseSchema, res.body);
    await eventually(() => cancelOf(s.id) !== undefined);
    expect(cancelOf(s.id)).toMatchObject({ requested_by: "alice", reason: "duplicate of INC-123" });
  });

  it("cancels as api-client without an identity; no body, {} and a blank reason send none", async () => {
    for (const init of [
      {},
      { body: {} },
      { body: { reason: "   " } },
      { rawBody: "", headers: { "content-type": "application/json" } },
    ]) {
      const s = await seedSession(h.db.prisma);
      await startSession(h.db.prisma, s.id);
      const res = await cancel(s.id, init);
      expect(res.status, JSON.stringify(init)).toBe(202);
      await eventually(() => cancelOf(s.id) !== undefined);
      expect(cancelOf(s.id)?.requested_by).toBe("api-client");
      expect(cancelOf(s.id)).not.toHaveProperty("reason");
    }
  });

  it("takes a reason of exactly 500 characters, counting code points", async () => {
    const s = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, s.id);
    // 500 emoji: 1,000 UTF-16 code units, still 500 characters.
    const reason = "🔥".repeat(500);
    expect((await cancel(s.id, { body: { reason } })).status).toBe(202);
    await eventually(() => cancelOf(s.id) !== undefined);
    expect(cancelOf(s.id)?.reason).toBe(reason);
  });

  it("answers 400 for a reason over 500 characters or not a string, and sends nothing", async () => {
    const s = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, s.id);
    for (const body of [
      { reason: "x".repeat(501) },
      { reason: 42 },
      { reason: null },
      { reason: ["duplicate"] },
      { why: "unknown field" },
    ]) {
      const res = await cancel(s.id, { body, headers: { "X-Forwarded-User": "alice" } });
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(typeof res.body.error.message).toBe("string");
    }
    const notJson = await cancel(s.id, { rawBody: "reason=dup" });
    expect(notJson.status).toBe(415);
    expect(notJson.body.error.code).toBe("unsupported_media_type");
    expect(cancelOf(s.id)).toBeUndefined();
    const row = await getSession(h.db.prisma, s.id);
    expect(row).toMatchObject({ status: "in_progress", cancelledBy: null, cancelReason: null });
  });

  it("shows who cancelled and why on the list, the detail and the status", async () => {
    const s = await seedSession(h.db.prisma, { data: "cancel attribution" });
    await finishSession(h.db.prisma, s.id, "cancelled", {
      cancelledBy: "alice",
      cancelReason: "duplicate of INC-123",
    });
    const attribution = { cancelled_by: "alice", cancel_reason: "duplicate of INC-123" };
    const detail = await request<SessionDetail>(`${h.url}/api/v1/sessions/${s.id}`);
    conforms(SessionDetailSchema, detail.body);
    expect(detail.body).toMatchObject({ status: "cancelled", ...attribution });
    const status = await request(`${h.url}/api/v1/sessions/${s.id}/status`);
    expect(status.body).toMatchObject({ status: "cancelled", ...attribution });
    const listed = (await list("search=cancel+attribution")).body.sessions;
    expect(listed.map((x) => x.id)).toEqual([s.id]);
    expect(listed[0]).toMatchObject(attribution);
    // Nobody cancelled a completed session.
    const done = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, done.id, "completed");
    expect((await request(`${h.url}/api/v1/sessions/${done.id}`)).body).toMatchObject({
      cancelled_by: null,
      cancel_reason: null,
    });
  });

  it("answers 409 for a finished session without a running chat answer, 404 for unknown", async () => {
    const s = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, s.id, "completed");
    const done = await request<ErrorBody>(`${h.url}/api/v1/sessions/${s.id}/cancel`, {
      method: "POST",
    });
    expect(done.status).toBe(409);
    expect(done.body.error.code).toBe("conflict");
    const unknown = await request<ErrorBody>(`${h.url}/api/v1/sessions/${UNKNOWN}/cancel`, {
      method: "POST",
    });
    expect(unknown.status).toBe(404);
    expect(h.received.cancelRequested.some((m) => m.session_id === s.id)).toBe(false);
  });
});
