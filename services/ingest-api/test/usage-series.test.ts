import {
  type UsageSeriesPoint,
  type UsageSeriesResponse,
  UsageSeriesResponseSchema,
} from "@tarsy/contracts";
import { type DbClient, recordLLMInteraction, softDeleteSession } from "@tarsy/db";
import { backdateLLMInteraction, backdateSession, countStoredRows } from "@tarsy/db/testing";
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
const ids = { s1: "", s2: "", s3: "", s4: "", now: "" };

async function llm(
  db: DbClient,
  sessionId: string,
  model: string,
  cost: number | null,
  opts: { at?: string; tokens?: number } = {},
) {
  const tokens = opts.tokens ?? 100;
  const row = await recordLLMInteraction(db, {
    sessionId,
    interactionType: "iteration",
    modelName: model,
    inputTokens: tokens,
    outputTokens: 0,
    totalTokens: tokens,
    ...(cost === null
      ? { costStatus: "unpriced" as const }
      : { estimatedCostUsd: cost, costStatus: "priced" as const, costRateSource: "builtin" }),
  });
  if (opts.at) await backdateLLMInteraction(db, row.id, new Date(opts.at));
}

/**
 * Sessions by creation time (what the series buckets by), window 2026-03-01 .. 2026-03-03:
 *
 *   s1  team-a  KubePodCrashLooping  k8s-chain      03-01 10:00Z  gemini-2.5-pro $3,
 *       gpt-5 $2 (its call on 03-05, still s1's day), gemini-2.0-flash-lite $0, an unpriced one
 *   s2  team-a  HighLatency          latency-chain  03-01 23:30Z  claude-sonnet-4 $1,
 *       gemini-2.5-flash $0.5 (03-02 08:30 in Tokyo)
 *   s3  team-b  KubePodCrashLooping  k8s-chain      03-03 05:00Z  gpt-5-mini $0.375,
 *       claude-haiku-4 $0.25, gpt-4o $0.25 (a tie: by name, claude-haiku-4 is the 6th), o3-mini $0.125
 *   s4  team-a  KubePodCrashLooping  k8s-chain      03-03 06:00Z  no LLM interactions
 *
 * Never in the window: a deleted session (03-02), and one created on 02-28 whose call is on 03-02.
 */
beforeAll(async () => {
  h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  const db = h.db.prisma;
  const session = async (project: string, alertType: string, chainId: string, at?: string) => {
    const { id } = await seedSession(db, { project, alertType, chainId });
    if (at) await backdateSession(db, id, new Date(at));
    return id;
  };
  ids.s1 = await session("team-a", "KubePodCrashLooping", "k8s-chain", "2026-03-01T10:00:00Z");
  ids.s2 = await session("team-a", "HighLatency", "latency-chain", "2026-03-01T23:30:00Z");
  ids.s3 = await session("team-b", "KubePodCrashLooping", "k8s-chain", "2026-03-03T05:00:00Z");
  ids.s4 = await session("team-a", "KubePodCrashLooping", "k8s-chain", "2026-03-03T06:00:00Z");
  const deleted = await session("team-a", "HighLatency", "latency-chain", "2026-03-02T12:00:00Z");
  const before = await session("team-a", "HighLatency", "latency-chain", "2026-02-28T23:00:00Z");
  ids.now = await session("team-c", "Other", "other-chain");

  await llm(db, ids.s1, "gemini-2.5-pro", 3, { at: "2026-03-01T10:01:00Z" });
  await llm(db, ids.s1, "gpt-5", 2, { at: "2026-03-05T12:00:00Z" });
  await llm(db, ids.s1, "gemini-2.0-flash-lite", 0);
  await llm(db, ids.s1, "gemini-2.5-pro", null, { tokens: 1000 });
  await llm(db, ids.s2, "claude-sonnet-4", 1);
  await llm(db, ids.s2, "gemini-2.5-flash", 0.5);
  await llm(db, ids.s3, "gpt-5-mini", 0.375);
  await llm(db, ids.s3, "claude-haiku-4", 0.25);
  await llm(db, ids.s3, "gpt-4o", 0.25);
  await llm(db, ids.s3, "o3-mini", 0.125);
  await llm(db, deleted, "gemini-2.5-pro", 100);
  await softDeleteSession(db, deleted);
  await llm(db, before, "gemini-2.5-pro", 50, { at: "2026-03-02T12:00:00Z" });
  await llm(db, ids.now, "gemini-2.5-flash", 0.01);
});
afterAll(async () => {
  await h?.close();
});

const WINDOW = "start_date=2026-03-01&end_date=2026-03-03";
type Enabled = Extract<UsageSeriesResponse, { cost_estimation_enabled: true }>;

async function series(query: string, headers: Record<string, string> = ADMIN): Promise<Enabled> {
  const res = await request<UsageSeriesResponse>(`${h.url}/api/v1/usage/series?${query}`, {
    headers,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  conforms(UsageSeriesResponseSchema, res.body);
  if (!res.body.cost_estimation_enabled) throw new Error("cost estimation is off");
  return res.body;
}

/** A point's figures in one line: date, sessions, cost, average, named models, other models. */
const figures = (p: UsageSeriesPoint) => [
  p.date,
  p.session_count,
  p.estimated_cost_usd,
  p.average_cost_usd,
  p.by_model,
  p.other_models?.map((m) => [m.model_name, m.estimated_cost_usd]),
];

describe("GET /api/v1/usage/series", () => {
  it("gives every UTC day of the window: sessions, cost by the top 6 models and the others, average", async () => {
    const body = await series(WINDOW);
    expect(body).toMatchObject({
      window: { start: "2026-03-01T00:00:00.000Z", end: "2026-03-04T00:00:00.000Z" },
      timezone: "UTC",
      bucket: "day",
      cost_completeness: "partial",
      unpriced_interaction_count: 1,
      unpriced_token_count: 1000,
    });
    // Largest window cost first; the tie at $0.25 goes to the name; $0 takes no slot.
    expect(body.models).toEqual([
      "gemini-2.5-pro",
      "gpt-5",
      "claude-sonnet-4",
      "gemini-2.5-flash",
      "gpt-5-mini",
      "claude-haiku-4",
    ]);
    expect(body.points.map(figures)).toEqual([
      [
        "2026-03-01",
        2,
        6.5,
        3.25,
        { "gemini-2.5-pro": 3, "gpt-5": 2, "claude-sonnet-4": 1, "gemini-2.5-flash": 0.5 },
        undefined,
      ],
      ["2026-03-02", 0, 0, undefined, {}, undefined],
      [
        "2026-03-03",
        2,
        1,
        0.5,
        { "gpt-5-mini": 0.375, "claude-haiku-4": 0.25 },
        [
          ["gpt-4o", 0.25],
          ["o3-mini", 0.125],
        ],
      ],
    ]);
    // A day without sessions has no average at all (not $0).
    expect(body.points[1]).not.toHaveProperty("average_cost_usd");
    expect(body.points[1]).not.toHaveProperty("other_models");
    expect(body.points.map((p) => [p.start, p.end])).toEqual([
      ["2026-03-01T00:00:00.000Z", "2026-03-02T00:00:00.000Z"],
      ["2026-03-02T00:00:00.000Z", "2026-03-03T00:00:00.000Z"],
      ["2026-03-03T00:00:00.000Z", "2026-03-04T00:00:00.000Z"],
    ]);
  });

  it("puts each session on its calendar day in the requested timezone", async () => {
    // s2 was created at 23:30 UTC on 03-01: 08:30 on 03-02 in Tokyo.
    const tokyo = await series(`${WINDOW}&timezone=Asia/Tokyo`);
    expect(tokyo.timezone).toBe("Asia/Tokyo");
    expect(tokyo.points.map((p) => [p.date, p.session_count, p.estimated_cost_usd])).toEqual([
      ["2026-03-01", 1, 5],
      ["2026-03-02", 1, 1.5],
      ["2026-03-03", 2, 1],
      ["2026-03-04", 0, 0],
    ]);
    // Local days clipped to the window (00:00Z is 09:00 in Tokyo).
    expect(tokyo.points.map((p) => [p.start, p.end])).toEqual([
      ["2026-03-01T00:00:00.000Z", "2026-03-01T15:00:00.000Z"],
      ["2026-03-01T15:00:00.000Z", "2026-03-02T15:00:00.000Z"],
      ["2026-03-02T15:00:00.000Z", "2026-03-03T15:00:00.000Z"],
      ["2026-03-03T15:00:00.000Z", "2026-03-04T00:00:00.000Z"],
    ]);
    // A window from local midnight: it now holds the session created at 23:00Z on 02-28
    // (08:00 on 03-01 in Tokyo), and its $50.
    const local = await series(
      "start_date=2026-03-01T00:00:00%2B09:00&end_date=2026-03-04T00:00:00%2B09:00&timezone=Asia/Tokyo",
    );
    expect(local.window.start).toBe("2026-02-28T15:00:00.000Z");
    expect(local.points.map((p) => [p.date, p.session_count, p.estimated_cost_usd])).toEqual([
      ["2026-03-01", 2, 55],
      ["2026-03-02", 1, 1.5],
      ["2026-03-03", 2, 1],
    ]);
  });

  it("follows daylight saving time: a calendar day of 23 hours", async () => {
    // New York springs forward on 2026-03-08: midnight is 05:00Z before, 04:00Z after.
    const body = await series(
      "start_date=2026-03-07T05:00:00Z&end_date=2026-03-10T04:00:00Z&timezone=America/New_York",
    );
    expect(body.points.map((p) => [p.date, p.start, p.end])).toEqual([
      ["2026-03-07", "2026-03-07T05:00:00.000Z", "2026-03-08T05:00:00.000Z"],
      ["2026-03-08", "2026-03-08T05:00:00.000Z", "2026-03-09T04:00:00.000Z"],
      ["2026-03-09", "2026-03-09T04:00:00.000Z", "2026-03-10T04:00:00.000Z"],
    ]);
  });

  it("adds up to the window's cost and sessions, and the days' averages weigh to its average", async () => {
    const body = await series(WINDOW);
    const sessions = body.points.reduce((n, p) => n + p.session_count, 0);
    const cost = body.points.reduce((n, p) => n + p.estimated_cost_usd, 0);
    expect([sessions, cost]).toEqual([4, 7.5]);
    const weighted = body.points.reduce(
      (n, p) => n + (p.average_cost_usd ?? 0) * p.session_count,
      0,
    );
    expect(weighted / sessions).toBe(7.5 / 4);
    for (const p of body.points) {
      const parts = [
        ...Object.values(p.by_model),
        ...(p.other_models ?? []).map((m) => m.estimated_cost_usd),
      ];
      expect(parts.reduce((a, b) => a + b, 0)).toBe(p.estimated_cost_usd);
    }
  });

  it("filters by alert type and chain", async () => {
    const latency = await series(`${WINDOW}&alert_type=HighLatency`);
    expect(latency.models).toEqual(["claude-sonnet-4", "gemini-2.5-flash"]);
    expect(latency.points.map(figures)).toEqual([
      ["2026-03-01", 1, 1.5, 1.5, { "claude-sonnet-4": 1, "gemini-2.5-flash": 0.5 }, undefined],
      ["2026-03-02", 0, 0, undefined, {}, undefined],
      ["2026-03-03", 0, 0, undefined, {}, undefined],
    ]);
    expect(latency.cost_completeness).toBe("complete");
    const k8s = await series(`${WINDOW}&chain_id=k8s-chain`);
    expect(k8s.points.map((p) => [p.date, p.session_count, p.estimated_cost_usd])).toEqual([
      ["2026-03-01", 1, 5],
      ["2026-03-02", 0, 0],
      ["2026-03-03", 2, 1],
    ]);
    expect(k8s.models).toHaveLength(6);
    const none = await series(`${WINDOW}&alert_type=Nothing`);
    expect(none).toMatchObject({
      models: [],
      cost_completeness: "none",
      unpriced_interaction_count: 0,
    });
    expect(none.points.map((p) => [p.date, p.session_count, p.estimated_cost_usd])).toEqual([
      ["2026-03-01", 0, 0],
      ["2026-03-02", 0, 0],
      ["2026-03-03", 0, 0],
    ]);
  });

  it("counts only the sessions of the caller's projects", async () => {
    const body = await series(WINDOW, VIEWER);
    expect(body.models).toEqual(["gemini-2.5-pro", "gpt-5", "claude-sonnet-4", "gemini-2.5-flash"]);
    // s3 is team-b's; s4 (team-a) is a session without cost: an average of $0.
    expect(body.points.map(figures)).toEqual([
      [
        "2026-03-01",
        2,
        6.5,
        3.25,
        { "gemini-2.5-pro": 3, "gpt-5": 2, "claude-sonnet-4": 1, "gemini-2.5-flash": 0.5 },
        undefined,
      ],
      ["2026-03-02", 0, 0, undefined, {}, undefined],
      ["2026-03-03", 1, 0, 0, {}, undefined],
    ]);
    const anonymous = await request<ErrorBody>(`${h.url}/api/v1/usage/series?${WINDOW}`);
    expect(anonymous.status).toBe(401);
  });

  it("defaults to the last 30 days in UTC, every day present", async () => {
    const before = Date.now();
    const body = await series("");
    expect(body.timezone).toBe("UTC");
    const start = Date.parse(body.window.start);
    const end = Date.parse(body.window.end);
    expect(end).toBeGreaterThanOrEqual(before - 1000);
    expect(end - start).toBe(30 * 86_400_000);
    const first = body.points[0];
    const last = body.points.at(-1);
    expect(first?.date).toBe(body.window.start.slice(0, 10));
    expect(first?.start).toBe(body.window.start);
    expect(last?.date).toBe(new Date(end - 1).toISOString().slice(0, 10));
    expect(last?.end).toBe(body.window.end);
    // One point a day, each starting where the previous one ends.
    for (let i = 1; i < body.points.length; i++) {
      expect(body.points[i]?.start).toBe(body.points[i - 1]?.end);
    }
    expect(body.points.length).toBeGreaterThanOrEqual(30);
    expect(body.points.filter((p) => p.session_count > 0).map(figures)).toEqual([
      [last?.date, 1, 0.01, 0.01, { "gemini-2.5-flash": 0.01 }, undefined],
    ]);
  });

  it("takes a window of exactly 365 days", async () => {
    const body = await series("start_date=2025-03-04&end_date=2026-03-03");
    expect(body.points).toHaveLength(365);
    expect(body.points.at(-1)).toMatchObject({ date: "2026-03-03", session_count: 2 });
  });

  it("answers 400 with the error shape to a bad timezone, date or window, storing nothing", async () => {
    const before = await countStoredRows(h.db.prisma);
    for (const [query, field] of [
      ["timezone=Mars/Olympus_Mons", "timezone"],
      ["timezone=%2B09:00", "timezone"],
      ["timezone=UTC%2B3", "timezone"],
      ["timezone=", "timezone"],
      ["timezone=Asia/Tokyo;DROP", "timezone"],
      ["start_date=yesterday", "start_date"],
      ["end_date=2026-02-30", "end_date"],
      ["start_date=2026-03-01T25:00:00Z", "start_date"],
      ["start_date=2026-03-03&end_date=2026-03-02", "start_date"],
      ["start_date=2026-03-02T00:00:00Z&end_date=2026-03-02T00:00:00Z", "start_date"],
      ["start_date=2025-03-03&end_date=2026-03-03", "start_date"],
      ["start_date=2020-01-01", "start_date"],
      ["rank_by=cost", "rank_by"],
    ] as const) {
      const res = await request<ErrorBody & { error: { details: { fields: { path: string }[] } } }>(
        `${h.url}/api/v1/usage/series?${query}`,
        { headers: ADMIN },
      );
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body), query).toEqual(["error"]);
      expect(res.body.error.code, query).toBe("validation_failed");
      expect(typeof res.body.error.message, query).toBe("string");
      expect(
        res.body.error.details.fields.map((f) => f.path),
        query,
      ).toContain(field);
    }
    expect(await countStoredRows(h.db.prisma)).toEqual(before);
  });

  it("with cost estimation off: says so, and charts nothing", async () => {
    const estimation = h.deps.config.system.cost_estimation;
    estimation.enabled = false;
    try {
      const res = await request<UsageSeriesResponse>(`${h.url}/api/v1/usage/series?${WINDOW}`, {
        headers: ADMIN,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ cost_estimation_enabled: false });
    } finally {
      estimation.enabled = true;
    }
  });
});
