import { UsageSummaryResponseSchema } from "@tarsy/contracts";
import { createDb, recordLLMInteraction } from "@tarsy/db";
import { backdateLLMInteraction, insertSessionRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSystem, type System, tarsy } from "./support.ts";

const DAY = 86_400_000;

/**
 * `tarsy usage` against the whole system booted as processes, on LLM interactions seeded with
 * known costs: a (gemini, 2 days ago, $0.50; gpt-5 unpriced, 2 days ago) and b (gemini,
 * 10 days ago, $2.00).
 */
describe("tarsy usage", () => {
  let sys: System;
  const ids = { a: "", b: "" };

  beforeAll(async () => {
    sys = await bootSystem();
    const db = createDb({ url: sys.database.url });
    try {
      const session = async (alertType: string) =>
        (
          await insertSessionRows(db.prisma, {
            count: 1,
            alertType,
            chainId: "k8s-chain",
            alertData: "usage",
            status: "completed",
          })
        )[0] ?? "";
      ids.a = await session("PodCrashLooping");
      ids.b = await session("HighLatency");
      const llm = async (
        id: string,
        ago: number,
        model: string,
        total: number,
        cost?: number,
        cache?: { cacheReadTokens: number; cacheCreationTokens: number },
      ) => {
        const row = await recordLLMInteraction(db.prisma, {
          sessionId: id,
          interactionType: "iteration",
          modelName: model,
          inputTokens: total - 100,
          outputTokens: 100,
          totalTokens: total,
          ...cache,
          ...(cost === undefined
            ? { costStatus: "unpriced" as const }
            : { costStatus: "priced" as const, estimatedCostUsd: cost, costRateSource: "builtin" }),
        });
        await backdateLLMInteraction(db.prisma, row.id, new Date(Date.now() - ago));
      };
      await llm(ids.a, 2 * DAY, "gemini-2.5-pro", 1_000, 0.5);
      await llm(ids.a, 2 * DAY, "gpt-5", 5_000, undefined, {
        cacheReadTokens: 4_000,
        cacheCreationTokens: 500,
      });
      await llm(ids.b, 10 * DAY, "gemini-2.5-pro", 2_000, 2);
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  }, 60_000);

  it("prints the totals, the models and the top sessions, ranked by cost by default", async () => {
    const run = await tarsy(["usage"], { env: sys.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^LLM usage \S+ → \S+, ranked by cost$/);
    expect(lines.slice(1, 5)).toEqual([
      "Estimated cost  $2.50 (1 of 3 interactions unpriced)",
      "Tokens          8,000 (7,700 in, 300 out, 0 thinking); 4,000 cache read, 500 cache write",
      "Sessions        2",
      "Interactions    3",
    ]);
    expect(run.stdout).toContain(
      [
        "MODEL            COST  TOKENS  CACHE READ  CACHE WRITE  INTERACTIONS  PRICED",
        "gemini-2.5-pro  $2.50   3,000           0            0             2  all",
        "gpt-5           $0.00   5,000       4,000          500             1  none",
      ].join("\n"),
    );
    const sessions = lines.filter((l) => l.startsWith(ids.a) || l.startsWith(ids.b));
    expect(sessions.map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      [ids.b, "$2.00", "2,000"],
      [ids.a, "$0.50", "6,000"],
    ]);
  }, 30_000);

  it("narrows the window with --since and ranks by tokens with --rank-by", async () => {
    const run = await tarsy(["usage", "--since", "7d", "--rank-by", "tokens", "--json"], {
      env: sys.env,
    });
    expect(run.code).toBe(0);
    const body = UsageSummaryResponseSchema.parse(JSON.parse(run.stdout));
    expect(Date.parse(body.end_date) - Date.parse(body.start_date)).toBeCloseTo(7 * DAY, -4);
    expect(body.totals).toMatchObject({ sessions: 1, llm_interactions: 2, total_tokens: 6_000 });
    expect(body.by_model.map((m) => m.model)).toEqual(["gpt-5", "gemini-2.5-pro"]);
    const top = await tarsy(["usage", "--top", "1", "--rank-by", "tokens"], { env: sys.env });
    expect(
      top.stdout.split("\n").filter((l) => l.startsWith(ids.a) || l.startsWith(ids.b)),
    ).toEqual([expect.stringMatching(new RegExp(`^${ids.a}\\s+\\$0\\.50\\s+6,000`))]);
  }, 30_000);

  it("refuses bad options with the usage (exit 2)", async () => {
    for (const args of [["--since", "week"], ["--rank-by", "money"], ["--top", "0"], ["extra"]]) {
      const run = await tarsy(["usage", ...args], { env: sys.env });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain("Usage: tarsy usage");
    }
  }, 30_000);
});
