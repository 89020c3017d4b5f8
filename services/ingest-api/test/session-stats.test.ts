import type {
  ActiveSessionsResponse,
  SessionDetail,
  SessionListResponse,
  SessionStatistics,
  SessionStatusResponse,
  TraceListResponse,
} from "@tarsy/contracts";
import {
  ActiveSessionsResponseSchema,
  SessionDetailSchema,
  SessionListResponseSchema,
  SessionStatisticsSchema,
  SessionStatusResponseSchema,
  TraceListResponseSchema,
} from "@tarsy/contracts";
import {
  type DbClient,
  ensureStage,
  openChatTurn,
  recordLLMInteraction,
  recordMCPInteraction,
  submitChatMessage,
  transitionExecutionStatus,
  transitionSessionStatus,
  transitionStageStatus,
} from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishSession, seedSession, startSession } from "./seed.ts";
import { conforms, type ErrorBody, type Harness, request, startHarness } from "./support.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

/**
 * A finished session with known rows: a single-agent stage (completed; 2 LLM calls, 3 tool
 * calls), a parallel stage of two agents (failed; 1 LLM call without token counts, 1 tool
 * call), a synthesis stage (completed; 1 LLM call), a session-level executive summary, and a
 * chat of two questions whose first was answered by a chat stage (completed; 1 LLM call).
 */
async function seedKnownSession(db: DbClient) {
  const session = await seedSession(db, { data: "known counts" });
  await finishSession(db, session.id, "completed", { finalAnalysis: "done" });
  const llm = (
    ref: { sessionId: string; stageId?: string; executionId?: string },
    tokens: [number, number, number] | null,
  ) =>
    recordLLMInteraction(db, {
      ...ref,
      interactionType: "iteration",
      modelName: "gemini-2.5-pro",
      // Priced at 0.01 USD per thousand input tokens; the call without token counts unpriced.
      ...(tokens
        ? {
            inputTokens: tokens[0],
            outputTokens: tokens[1],
            totalTokens: tokens[2],
            estimatedCostUsd: tokens[0] / 100_000,
            costStatus: "priced" as const,
            costRateSource: "model_rates",
          }
        : { costStatus: "unpriced" as const }),
    });
  const mcp = (ref: { sessionId: string; stageId: string; executionId: string }) =>
    recordMCPInteraction(db, {
      ...ref,
      interactionType: "tool_call",
      serverName: "kubernetes-server",
      toolName: "pods_list",
    });
  const sessionId = session.id;

  const one = await ensureStage(db, { sessionId, stageName: "investigate", stageIndex: 1 }, [
    { agentName: "KubernetesAgent", agentIndex: 1 },
  ]);
  const oneRef = { sessionId, stageId: one.stage.id, executionId: one.executions[0]?.id ?? "" };
  await llm(oneRef, [100, 10, 110]);
  await llm(oneRef, [200, 20, 220]);
  for (let i = 0; i < 3; i++) await mcp(oneRef);
  await transitionStageStatus(db, one.stage.id, ["pending"], "completed");

  const two = await ensureStage(
    db,
    {
      sessionId,
      stageName: "deep-dive",
      stageIndex: 2,
      parallelType: "multi_agent",
      expectedAgentCount: 2,
      successPolicy: "all",
    },
    [
      { agentName: "LogsAgent", agentIndex: 1 },
      { agentName: "MetricsAgent", agentIndex: 2 },
    ],
  );
  const twoRef = { sessionId, stageId: two.stage.id, executionId: two.executions[1]?.id ?? "" };
  await llm(twoRef, null);
  await mcp(twoRef);
  await transitionStageStatus(db, two.stage.id, ["pending"], "failed", {
    errorMessage: "MetricsAgent failed",
  });

  const three = await ensureStage(
    db,
    { sessionId, stageName: "deep-dive - Synthesis", stageIndex: 3, kind: "synthesis" },
    [{ agentName: "SynthesisAgent", agentIndex: 1, kind: "synthesis" }],
  );
  await llm(
    { sessionId, stageId: three.stage.id, executionId: three.executions[0]?.id ?? "" },
    [50, 5, 55],
  );
  await transitionStageStatus(db, three.stage.id, ["pending"], "completed");

  await llm({ sessionId }, [10, 1, 11]); // the executive summary, no stage

  const first = await submitChatMessage(db, { sessionId, content: "Why?", author: "dan" });
  const turn = await openChatTurn(db, {
    sessionId,
    chatId: first.chat.id,
    messageId: first.message.id,
    stageId: first.stageId,
    stageName: "Chat Response",
    agent: { agentName: "ChatAgent" },
  });
  await llm(
    { sessionId, stageId: turn.stage.id, executionId: turn.executions[0]?.id ?? "" },
    [1, 1, 2],
  );
  await transitionStageStatus(db, turn.stage.id, ["pending"], "completed");
  await submitChatMessage(db, { sessionId, content: "And then?", author: "dan" });
  return { session, stages: [one, two, three] };
}

const KNOWN = {
  llm_interaction_count: 6,
  mcp_interaction_count: 4,
  input_tokens: 361,
  output_tokens: 37,
  total_tokens: 398,
  total_stages: 4,
  completed_stages: 3,
  failed_stages: 1,
  has_parallel_stages: true,
  chat_message_count: 2,
  cost: { estimated_cost_usd: 0.00361, cost_completeness: "partial", unpriced_interactions: 1 },
};
const EMPTY = {
  llm_interaction_count: 0,
  mcp_interaction_count: 0,
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  total_stages: 0,
  completed_stages: 0,
  failed_stages: 0,
  has_parallel_stages: false,
  chat_message_count: 0,
  cost: { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 0 },
};

describe("session aggregates on the list, active view, detail and summary", () => {
  let known: string;
  let quiet: string;
  let running: string;
  beforeAll(async () => {
    known = (await seedKnownSession(h.db.prisma)).session.id;
    quiet = (await seedSession(h.db.prisma, { data: "no rows yet" })).id;
    running = (await seedSession(h.db.prisma, { data: "running one" })).id;
    await startSession(h.db.prisma, running);
    const stage = await ensureStage(
      h.db.prisma,
      { sessionId: running, stageName: "replicas", stageIndex: 1, parallelType: "replica" },
      [{ agentName: "KubernetesAgent", agentIndex: 1 }],
    );
    await recordLLMInteraction(h.db.prisma, {
      sessionId: running,
      stageId: stage.stage.id,
      executionId: stage.executions[0]?.id ?? null,
      interactionType: "iteration",
      modelName: "gemini-2.5-pro",
      inputTokens: 7,
      outputTokens: 3,
      totalTokens: 10,
    });
  });

  it("the list carries each session's own exact counts, with token_usage kept", async () => {
    const res = await request<SessionListResponse>(`${h.url}/api/v1/sessions?page_size=10`);
    expect(res.status).toBe(200);
    conforms(SessionListResponseSchema, res.body);
    const byId = new Map(res.body.sessions.map((s) => [s.id, s]));
    expect(byId.get(known)).toMatchObject(KNOWN);
    expect(byId.get(quiet)).toMatchObject(EMPTY);
    expect(byId.get(running)).toMatchObject({
      ...EMPTY,
      llm_interaction_count: 1,
      input_tokens: 7,
      output_tokens: 3,
      total_tokens: 10,
      total_stages: 1,
      has_parallel_stages: true,
      // Written before cost estimation existed (no cost status): not priced.
      cost: { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 1 },
    });
    const k = byId.get(known);
    expect(k?.token_usage).toBeDefined();
    expect(k?.started_at).not.toBeNull();
    expect(k?.completed_at).not.toBeNull();
    expect(k?.duration_ms).toBe(
      new Date(k?.completed_at ?? 0).getTime() - new Date(k?.started_at ?? 0).getTime(),
    );
    expect(byId.get(quiet)?.duration_ms).toBeNull();
  });

  it("a page of up to 1,000 sessions holds as many as page_size says", async () => {
    for (let i = 0; i < 201; i++) await seedSession(h.db.prisma, { data: `bulk ${i}` });
    const res = await request<SessionListResponse>(`${h.url}/api/v1/sessions?page_size=1000`);
    expect(res.body.pagination).toMatchObject({ page_size: 1000, total: 204, total_pages: 1 });
    expect(res.body.sessions).toHaveLength(204);
  });

  it("the active view carries them too", async () => {
    const res = await request<ActiveSessionsResponse>(`${h.url}/api/v1/sessions/active`);
    conforms(ActiveSessionsResponseSchema, res.body);
    expect(res.body.active.find((s) => s.id === running)).toMatchObject({
      llm_interaction_count: 1,
      total_stages: 1,
      has_parallel_stages: true,
    });
    expect(res.body.queued.find((s) => s.id === quiet)).toMatchObject(EMPTY);
  });

  it("the detail carries them, and each stage its expected agent count", async () => {
    const res = await request<SessionDetail>(`${h.url}/api/v1/sessions/${known}`);
    expect(res.status).toBe(200);
    conforms(SessionDetailSchema, res.body);
    expect(res.body).toMatchObject(KNOWN);
    expect(res.body.stages.map((s) => [s.stage_name, s.status, s.expected_agent_count])).toEqual([
      ["investigate", "completed", 1],
      ["deep-dive", "failed", 2],
      ["deep-dive - Synthesis", "completed", 1],
      ["Chat Response", "completed", 1],
    ]);
  });

  it("the detail has each stage's tokens (sum over its executions) and cost, and each execution's cost", async () => {
    const prisma = h.db.prisma;
    const { stages } = await seedKnownSession(prisma);
    const [one, two] = stages;
    // Executions' token counters are kept by the runner; set them as it would.
    await transitionExecutionStatus(
      prisma,
      two?.executions[0]?.id ?? "",
      ["pending"],
      "completed",
      {
        inputTokens: 5,
        outputTokens: 2,
        thinkingTokens: 1,
        totalTokens: 8,
      },
    );
    await transitionExecutionStatus(prisma, two?.executions[1]?.id ?? "", ["pending"], "failed", {
      inputTokens: 10,
      outputTokens: 4,
      thinkingTokens: 0,
      totalTokens: 14,
    });
    const res = await request<SessionDetail>(`${h.url}/api/v1/sessions/${one?.stage.sessionId}`);
    conforms(SessionDetailSchema, res.body);
    const priced = (usd: number) => ({
      estimated_cost_usd: usd,
      cost_completeness: "complete",
      unpriced_interactions: 0,
    });
    expect(res.body.cost).toEqual(KNOWN.cost);
    expect(res.body.stages.map((s) => [s.stage_name, s.cost])).toEqual([
      ["investigate", priced(0.003)],
      ["deep-dive", { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 1 }],
      ["deep-dive - Synthesis", priced(0.0005)],
      ["Chat Response", priced(0.00001)],
    ]);
    const deepDive = res.body.stages[1];
    expect(deepDive?.token_usage).toEqual({
      input_tokens: 15,
      output_tokens: 6,
      thinking_tokens: 1,
      total_tokens: 22,
    });
    expect(deepDive?.executions.map((e) => [e.agent_name, e.cost])).toEqual([
      ["LogsAgent", { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 0 }],
      [
        "MetricsAgent",
        { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 1 },
      ],
    ]);
    expect(res.body.stages[0]?.executions[0]?.cost).toEqual(priced(0.003));
  });

  it("interactions written while estimation was disabled: no cost, completeness none, each one disabled in the trace", async () => {
    const prisma = h.db.prisma;
    const off = await seedSession(prisma, { data: "estimation off" });
    const { stage, executions } = await ensureStage(
      prisma,
      { sessionId: off.id, stageName: "investigate", stageIndex: 1 },
      [{ agentName: "KubernetesAgent", agentIndex: 1 }],
    );
    for (const interactionType of ["iteration", "final_analysis"] as const) {
      await recordLLMInteraction(prisma, {
        sessionId: off.id,
        stageId: stage.id,
        executionId: executions[0]?.id ?? null,
        interactionType,
        modelName: "gemini-2.5-pro",
        inputTokens: 100,
        outputTokens: 10,
        totalTokens: 110,
        costStatus: "disabled",
      });
    }
    const none = { estimated_cost_usd: 0, cost_completeness: "none", unpriced_interactions: 2 };
    const detail = (await request<SessionDetail>(`${h.url}/api/v1/sessions/${off.id}`)).body;
    expect(detail.cost).toEqual(none);
    expect(detail.stages[0]?.cost).toEqual(none);
    expect(detail.stages[0]?.executions[0]?.cost).toEqual(none);
    const summary = await request<SessionStatistics>(`${h.url}/api/v1/sessions/${off.id}/summary`);
    expect(summary.body).toMatchObject({ estimated_cost_usd: 0, cost_completeness: "none" });
    const trace = await request<TraceListResponse>(`${h.url}/api/v1/sessions/${off.id}/trace`);
    conforms(TraceListResponseSchema, trace.body);
    const calls = trace.body.stages[0]?.executions[0]?.llm_interactions ?? [];
    expect(calls.map((i) => [i.cost_status, i.estimated_cost_usd])).toEqual([
      ["disabled", null],
      ["disabled", null],
    ]);
  });

  it("GET /sessions/:id/summary answers the Go TARSy's statistics", async () => {
    const res = await request<SessionStatistics>(`${h.url}/api/v1/sessions/${known}/summary`);
    expect(res.status).toBe(200);
    conforms(SessionStatisticsSchema, res.body);
    const detail = (await request<SessionDetail>(`${h.url}/api/v1/sessions/${known}`)).body;
    expect(res.body).toEqual({
      session_id: known,
      total_interactions: 10,
      llm_interactions: 6,
      mcp_interactions: 4,
      input_tokens: 361,
      output_tokens: 37,
      total_tokens: 398,
      total_duration_ms: detail.duration_ms,
      estimated_cost_usd: 0.00361,
      cost_completeness: "partial",
      chain_statistics: {
        total_stages: 4,
        completed_stages: 3,
        failed_stages: 1,
        current_stage_index: null,
      },
      total_score: null,
      scoring_status: null,
    });
    expect(typeof res.body.total_duration_ms).toBe("number");
    const empty = await request<SessionStatistics>(`${h.url}/api/v1/sessions/${quiet}/summary`);
    expect(empty.body).toMatchObject({ total_interactions: 0, total_duration_ms: null });
  });

  it("summary and status of an unknown session are 404 with the error shape", async () => {
    for (const path of ["summary", "status"]) {
      const res = await request<ErrorBody>(`${h.url}/api/v1/sessions/${UNKNOWN}/${path}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.message).toContain(UNKNOWN);
    }
  });
});

describe("GET /sessions/:id/status", () => {
  it("answers the polling fields with a strong ETag; If-None-Match gets 304 until the status changes", async () => {
    const s = await seedSession(h.db.prisma, { data: "poll me" });
    const url = `${h.url}/api/v1/sessions/${s.id}/status`;
    const first = await fetch(url);
    expect(first.status).toBe(200);
    const text = await first.text();
    const body = JSON.parse(text) as SessionStatusResponse;
    conforms(SessionStatusResponseSchema, body);
    expect(body).toEqual({
      id: s.id,
      status: "pending",
      final_analysis: null,
      executive_summary: null,
      error_message: null,
      cancelled_by: null,
      cancel_reason: null,
      labels: null,
    });
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/); // strong: no W/ prefix
    // Exactly the body's hash: the same bytes give the same tag.
    const { etagOf } = await import("../src/etag.ts");
    expect(etag).toBe(etagOf(text));

    const unchanged = await fetch(url, { headers: { "If-None-Match": etag ?? "" } });
    expect(unchanged.status).toBe(304);
    expect(await unchanged.text()).toBe("");
    expect(unchanged.headers.get("etag")).toBe(etag);
    // A list with the tag, and the weak form, match too; another tag does not.
    expect((await fetch(url, { headers: { "If-None-Match": `"x", W/${etag}` } })).status).toBe(304);
    const other = await fetch(url, { headers: { "If-None-Match": '"something-else"' } });
    expect(other.status).toBe(200);
    await other.text();

    await startSession(h.db.prisma, s.id);
    const changed = await fetch(url, { headers: { "If-None-Match": etag ?? "" } });
    expect(changed.status).toBe(200);
    const changedBody = (await changed.json()) as SessionStatusResponse;
    expect(changedBody.status).toBe("in_progress");
    const etag2 = changed.headers.get("etag");
    expect(etag2).not.toBe(etag);

    await transitionSessionStatus(h.db.prisma, s.id, ["in_progress"], "failed", {
      errorMessage: "LLM quota exceeded",
      completedAt: new Date(),
    });
    const failed = await fetch(url, { headers: { "If-None-Match": etag2 ?? "" } });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({
      status: "failed",
      error_message: "LLM quota exceeded",
    });
  });
});
