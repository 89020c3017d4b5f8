import { type UsageSummaryResponse, UsageSummaryResponseSchema } from "@tarsy/contracts";
import { type DbClient, recordLLMInteraction, softDeleteSession } from "@tarsy/db";
import { backdateLLMInteraction } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

const as = (user: string, groups: string) => ({
  "x-forwarded-user": user,
  "x-forwarded-groups": groups,
});
const ADMIN = as("adam", "admins");
const VIEWER = as("vera", "viewers-a"); // reads team-a only

let h: Harness;
const ids: Record<"a" | "b" | "c" | "deleted", string> = { a: "", b: "", c: "", deleted: "" };

type Cost = { cost: number } | { unpriced: "unpriced" | "disabled" };
async function llm(
  db: DbClient,
  sessionId: string,
  at: string | null,
  model: string,
  tokens: [number, number, number, number],
  cost: Cost,
) {
  const row = await recordLLMInteraction(db, {
    sessionId,
    interactionType: "iteration",
    modelName: model,
    inputTokens: tokens[0],
    outputTokens: tokens[1],
    thinkingTokens: tokens[2],
    totalTokens: tokens[3],
    ...("cost" in cost
      ? { estimatedCostUsd: cost.cost, costStatus: "priced" as const, costRateSource: "builtin" }
      : { costStatus: cost.unpriced }),
  });
  if (at) await backdateLLMInteraction(db, row.id, new Date(at));
}

/**
 * Window 2026-03-01 .. 2026-03-03 (the whole of the 3rd). Sessions: a (team-a, crash loop,
 * k8s-chain), b (team-a, latency, latency-chain), c (team-b, crash loop, k8s-chain), a deleted
 * one (team-a) and e (team-c, used only now: the default window).
 */
beforeAll(async () => {
  h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  const db = h.db.prisma;
  const session = (project: string, alertType: string, chainId: string) =>
    seedSession(db, { project, alertType, chainId }).then((s) => s.id);
  ids.a = await session("team-a", "KubePodCrashLooping", "k8s-chain");
  ids.b = await session("team-a", "HighLatency", "latency-chain");
  ids.c = await session("team-b", "KubePodCrashLooping", "k8s-chain");
  ids.deleted = await session("team-a", "KubePodCrashLooping", "k8s-chain");
  const e = await session("team-c", "Other", "other-chain");

  await llm(db, ids.a, "2026-03-01T00:00:00.000Z", "gemini-2.5-pro", [100, 10, 5, 115], {
    cost: 0.5,
  });
  await llm(db, ids.a, "2026-03-02T12:00:00.000Z", "gemini-2.5-pro", [200, 20, 0, 220], {
    cost: 1,
  });
  await llm(db, ids.a, "2026-03-02T23:59:59.999Z", "gpt-5", [1000, 100, 0, 1100], {
    unpriced: "unpriced",
  });
  await llm(db, ids.b, "2026-03-03T08:00:00.000Z", "gpt-5", [50, 5, 0, 55], { cost: 0.25 });
  await llm(db, ids.b, "2026-03-03T09:00:00.000Z", "claude-sonnet-4", [3000, 300, 0, 3300], {
    unpriced: "disabled",
  });
  await llm(db, ids.c, "2026-03-02T10:00:00.000Z", "gemini-2.5-pro", [10, 1, 0, 11], { cost: 2 });
  // Never counted: a deleted session, and the instants just outside the window.
  await llm(db, ids.deleted, "2026-03-02T10:00:00.000Z", "gemini-2.5-pro", [9e4, 0, 0, 9e4], {
    cost: 100,
  });
  await softDeleteSession(db, ids.deleted);
  await llm(db, ids.a, "2026-02-28T23:59:59.999Z", "gemini-2.5-pro", [1, 1, 0, 2], { cost: 10 });
  await llm(db, ids.a, "2026-03-04T00:00:00.000Z", "gemini-2.5-pro", [1, 1, 0, 2], { cost: 10 });
  await llm(db, e, null, "gemini-2.5-flash", [7, 3, 0, 10], { cost: 0.01 });
});
afterAll(async () => {
  await h?.close();
});

const WINDOW = "start_date=2026-03-01&end_date=2026-03-03";
async function summary(query: string, headers: Record<string, string> = ADMIN) {
  const res = await request<UsageSummaryResponse>(`${h.url}/api/v1/usage/summary?${query}`, {
    headers,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  conforms(UsageSummaryResponseSchema, res.body);
  return res.body;
}

describe("GET /api/v1/usage/summary", () => {
  it("sums the window's interactions of live sessions, per day, model, alert type and chain", async () => {
    const body = await summary(WINDOW);
    expect(body.start_date).toBe("2026-03-01T00:00:00.000Z");
    expect(body.end_date).toBe("2026-03-04T00:00:00.000Z");
    expect(body.rank_by).toBe("cost");
    expect(body.totals).toEqual({
      sessions: 3,
      llm_interactions: 6,
      input_tokens: 4360,
      output_tokens: 436,
      thinking_tokens: 5,
      total_tokens: 4801,
      cache_read_tokens: 0,
      cache_creation_tokens: 0,
      estimated_cost_usd: 3.75,
      unpriced_interactions: 2,
      cost_completeness: "partial",
    });
    expect(
      body.by_day.map((d) => [
        d.date,
        d.llm_interactions,
        d.sessions,
        d.estimated_cost_usd,
        d.total_tokens,
        d.cost_completeness,
      ]),
    ).toEqual([
      ["2026-03-01", 1, 1, 0.5, 115, "complete"],
      ["2026-03-02", 3, 2, 3, 1331, "partial"],
      ["2026-03-03", 2, 1, 0.25, 3355, "partial"],
    ]);
    expect(
      body.by_model.map((m) => [
        m.model,
        m.estimated_cost_usd,
        m.total_tokens,
        m.unpriced_interactions,
        m.cost_completeness,
      ]),
    ).toEqual([
      ["gemini-2.5-pro", 3.5, 346, 0, "complete"],
      ["gpt-5", 0.25, 1155, 1, "partial"],
      ["claude-sonnet-4", 0, 3300, 1, "none"],
    ]);
    expect(
      body.by_alert_type.map((a) => [
        a.alert_type,
        a.sessions,
        a.estimated_cost_usd,
        a.total_tokens,
      ]),
    ).toEqual([
      ["KubePodCrashLooping", 2, 3.5, 1446],
      ["HighLatency", 1, 0.25, 3355],
    ]);
    expect(body.by_chain.map((c) => [c.chain_id, c.llm_interactions])).toEqual([
      ["k8s-chain", 4],
      ["latency-chain", 2],
    ]);
    expect(
      body.top_sessions.map((s) => [
        s.session_id,
        s.alert_type,
        s.chain_id,
        s.estimated_cost_usd,
        s.total_tokens,
        s.cost_completeness,
      ]),
    ).toEqual([
      [ids.c, "KubePodCrashLooping", "k8s-chain", 2, 11, "complete"],
      [ids.a, "KubePodCrashLooping", "k8s-chain", 1.5, 1435, "partial"],
      [ids.b, "HighLatency", "latency-chain", 0.25, 3355, "partial"],
    ]);
    expect(body.top_sessions[0]).toMatchObject({ status: "pending", llm_interactions: 1 });
  });

  it("ranks by tokens, and keeps the top N sessions", async () => {
    const body = await summary(`${WINDOW}&rank_by=tokens&top=2`);
    expect(body.rank_by).toBe("tokens");
    expect(body.by_model.map((m) => m.model)).toEqual([
      "claude-sonnet-4",
      "gpt-5",
      "gemini-2.5-pro",
    ]);
    expect(body.by_alert_type.map((a) => a.alert_type)).toEqual([
      "HighLatency",
      "KubePodCrashLooping",
    ]);
    expect(body.by_chain.map((c) => c.chain_id)).toEqual(["latency-chain", "k8s-chain"]);
    expect(body.top_sessions.map((s) => s.session_id)).toEqual([ids.b, ids.a]);
    const one = await summary(`${WINDOW}&top=1`);
    expect(one.top_sessions.map((s) => s.session_id)).toEqual([ids.c]);
  });

  it("takes instants as edges: start included, end excluded", async () => {
    const body = await summary("start_date=2026-03-02T12:00:00Z&end_date=2026-03-03T08:00:00Z");
    expect(body.totals).toMatchObject({
      llm_interactions: 2,
      sessions: 1,
      estimated_cost_usd: 1,
      total_tokens: 1320,
      unpriced_interactions: 1,
    });
    expect(body.by_day.map((d) => d.date)).toEqual(["2026-03-02"]);
    // A single day as both edges is that whole day.
    const day = await summary("start_date=2026-03-02&end_date=2026-03-02");
    expect(day.totals.llm_interactions).toBe(3);
  });

  it("filters by alert type and chain", async () => {
    const latency = await summary(`${WINDOW}&alert_type=HighLatency`);
    expect(latency.totals).toMatchObject({ sessions: 1, llm_interactions: 2, total_tokens: 3355 });
    expect(latency.by_alert_type.map((a) => a.alert_type)).toEqual(["HighLatency"]);
    const k8s = await summary(`${WINDOW}&chain_id=k8s-chain`);
    expect(k8s.totals).toMatchObject({ sessions: 2, llm_interactions: 4, estimated_cost_usd: 3.5 });
    const none = await summary(`${WINDOW}&alert_type=Nothing`);
    expect(none.totals).toMatchObject({
      sessions: 0,
      llm_interactions: 0,
      cost_completeness: "none",
    });
    expect(none.by_day).toEqual([]);
    expect(none.top_sessions).toEqual([]);
  });

  it("counts only the sessions of the caller's projects", async () => {
    const body = await summary(WINDOW, VIEWER);
    expect(body.totals).toMatchObject({
      sessions: 2,
      llm_interactions: 5,
      estimated_cost_usd: 1.75,
      total_tokens: 4790,
    });
    expect(body.top_sessions.map((s) => s.session_id)).toEqual([ids.a, ids.b]);
    const anonymous = await request<ErrorBody>(`${h.url}/api/v1/usage/summary?${WINDOW}`);
    expect(anonymous.status).toBe(401);
  });

  it("defaults to the last 30 days", async () => {
    const before = Date.now();
    const body = await summary("");
    const end = Date.parse(body.end_date);
    expect(end).toBeGreaterThanOrEqual(before - 1000);
    expect(end - Date.parse(body.start_date)).toBe(30 * 86_400_000);
    expect(body.totals).toMatchObject({ sessions: 1, llm_interactions: 1, total_tokens: 10 });
    expect(body.by_model.map((m) => m.model)).toEqual(["gemini-2.5-flash"]);
  });

  it("answers 400 to a bad query", async () => {
    for (const query of [
      "rank_by=money",
      "top=0",
      "top=101",
      "top=ten",
      "start_date=yesterday",
      "end_date=2026-13-01",
      "alert_type=",
      "project=team-a",
      "start_date=2026-03-03&end_date=2026-03-02",
      "start_date=2026-03-02T00:00:00Z&end_date=2026-03-02T00:00:00Z",
    ]) {
      const res = await request<ErrorBody>(`${h.url}/api/v1/usage/summary?${query}`, {
        headers: ADMIN,
      });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("validation_failed");
    }
  });

  it("with cost estimation off: ranks by tokens by default and refuses rank_by=cost", async () => {
    const estimation = h.deps.config.system.cost_estimation;
    const window = "start_date=2026-03-01&end_date=2026-03-03";
    estimation.enabled = false;
    try {
      const refused = await request<ErrorBody>(
        `${h.url}/api/v1/usage/summary?${window}&rank_by=cost`,
        { headers: ADMIN },
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe("cost_estimation_disabled");
      const byDefault = await request<UsageSummaryResponse>(
        `${h.url}/api/v1/usage/summary?${window}`,
        { headers: ADMIN },
      );
      expect(byDefault.status).toBe(200);
      expect(byDefault.body.rank_by).toBe("tokens");
      const tokens = byDefault.body.top_sessions.map((t) => t.total_tokens);
      expect(tokens).toEqual([...tokens].sort((a, b) => b - a));
    } finally {
      estimation.enabled = true;
    }
    const on = await request<UsageSummaryResponse>(`${h.url}/api/v1/usage/summary?${window}`, {
      headers: ADMIN,
    });
    expect(on.body.rank_by).toBe("cost");
  });
});
