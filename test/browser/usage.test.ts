import { copyFile, mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { createDb, recordLLMInteraction } from "@tarsy/db";
import { backdateLLMInteraction, backdateSession, insertSessionRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, SCREENSHOTS, startDashboardRig } from "./support.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const README_SHOTS = resolve(ROOT, "packages/dashboard/docs/screenshots");

/**
 * The Usage page in Chromium against the whole system, on LLM interactions seeded with known
 * costs: s1 and s3 (PodCrashLooping, k8s-chain) and s2 (HighLatency, latency-chain); s3's only
 * interaction is 10 days old (inside 30 days, outside 7). The sessions were created 3, 2 and 10
 * days ago (the days the cost-over-time charts put their cost on).
 *
 *          model            when    tokens  cost
 *   s1     gemini-2.5-pro   -1h      1,200  $0.40
 *   s1     gemini-2.5-pro   -3d      2,300  $0.80
 *   s2     gpt-5            -2d        600  $1.10
 *   s2     claude-sonnet-4  -2d      4,000  unpriced  (+3,000 cache read, 200 cache write)
 *   s3     gemini-2.5-pro   -10d    11,000  $2.00
 */
describe("the Usage page", () => {
  let rig: DashboardRig;
  const ids = { s1: "", s2: "", s3: "" };
  let seededAt = 0;

  beforeAll(async () => {
    rig = await startDashboardRig();
    const db = createDb({ url: rig.system.database.url });
    const now = Date.now();
    seededAt = now;
    try {
      // Finished sessions, inserted without their outbox messages: nothing runs them (and
      // writes interactions of its own) while the page is read.
      const session = async (alertType: string, chainId: string) => {
        const [id = ""] = await insertSessionRows(db.prisma, {
          count: 1,
          alertType,
          chainId,
          alertData: "usage",
          status: "completed",
        });
        return id;
      };
      ids.s1 = await session("PodCrashLooping", "k8s-chain");
      ids.s2 = await session("HighLatency", "latency-chain");
      ids.s3 = await session("PodCrashLooping", "k8s-chain");
      const llm = async (
        sessionId: string,
        ago: number,
        modelName: string,
        [input, output]: [number, number],
        cost: number | null,
        cache: { cacheReadTokens: number; cacheCreationTokens: number } | null = null,
      ) => {
        const row = await recordLLMInteraction(db.prisma, {
          sessionId,
          interactionType: "iteration",
          modelName,
          inputTokens: input,
          outputTokens: output,
          totalTokens: input + output,
          ...cache,
          ...(cost === null
            ? { costStatus: "unpriced" as const }
            : { costStatus: "priced" as const, estimatedCostUsd: cost, costRateSource: "builtin" }),
        });
        await backdateLLMInteraction(db.prisma, row.id, new Date(now - ago));
      };
      await llm(ids.s1, HOUR, "gemini-2.5-pro", [1000, 200], 0.4);
      await llm(ids.s1, 3 * DAY, "gemini-2.5-pro", [2000, 300], 0.8);
      await llm(ids.s2, 2 * DAY, "gpt-5", [500, 100], 1.1);
      await llm(ids.s2, 2 * DAY, "claude-sonnet-4", [3500, 500], null, {
        cacheReadTokens: 3000,
        cacheCreationTokens: 200,
      });
      await llm(ids.s3, 10 * DAY, "gemini-2.5-pro", [10000, 1000], 2);
      await backdateSession(db.prisma, ids.s1, new Date(now - 3 * DAY));
      await backdateSession(db.prisma, ids.s2, new Date(now - 2 * DAY));
      await backdateSession(db.prisma, ids.s3, new Date(now - 10 * DAY));
    } finally {
      await db.close();
    }
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  /** Waits for the figures of the URL's query (not the previous ones) and reads the totals. */
  async function totals(query: string) {
    const { page } = rig;
    await page.locator(`[data-testid="usage-loaded"][data-query="${query}"]`).waitFor();
    const text = (id: string) => page.getByTestId(id).textContent();
    return {
      cost: await text("usage-cost"),
      tokens: await text("usage-tokens"),
      sessions: await text("usage-sessions"),
      interactions: await text("usage-interactions"),
      unpriced: await text("usage-unpriced"),
    };
  }
  const rows = (table: string) =>
    rig.page
      .getByRole("table", { name: table })
      .locator("tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("th, td")].map((c) => c.textContent?.trim())),
      );

  it("is reached from the app bar without the session list loading the chart library", async () => {
    const { page } = rig;
    const scripts: string[] = [];
    page.on("request", (r) => {
      if (r.resourceType() === "script") scripts.push(r.url());
    });
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.getByRole("heading", { name: /^Active/ }).waitFor();
    expect(scripts.some((s) => s.includes("UsagePage"))).toBe(false);
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Usage" })
      .click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    expect(scripts.some((s) => s.includes("UsagePage"))).toBe(true);
    expect(await totals("")).toEqual({
      cost: "$4.30",
      tokens: "19,100",
      sessions: "3",
      interactions: "5",
      unpriced: "1",
    });
    await expect
      .poll(() => page.getByTestId("usage-cost").locator("..").textContent())
      .toContain("1 unpriced");
  }, 60_000);

  it("charts cost and tokens per day, by model and by alert type, ranked by cost", async () => {
    const { page } = rig;
    for (const chart of ["chart-cost-per-day", "chart-tokens-per-day"]) {
      await expect
        .poll(() => page.getByTestId(chart).locator("svg rect").count())
        .toBeGreaterThan(0);
    }
    // The bars of the model chart, top to bottom, as the band axis labels them.
    const modelAxis = page.getByRole("figure", { name: "By model, cost" }).locator("text");
    await expect
      .poll(async () => (await modelAxis.allTextContents()).join("|"))
      .toContain("gemini-2.5-pro|gpt-5|claude-sonnet-4");
    // Name, cost, tokens, cache read, cache write, interactions, priced.
    expect(await rows("By model")).toEqual([
      ["gemini-2.5-pro", "$3.20", "14,500", "0", "0", "3", "all priced"],
      ["gpt-5", "$1.10", "600", "0", "0", "1", "all priced"],
      ["claude-sonnet-4", "$0.00", "4,000", "3,000", "200", "1", "not priced"],
    ]);
    expect(await rows("By alert type")).toEqual([
      ["PodCrashLooping", "$3.20", "14,500", "0", "0", "3", "all priced"],
      ["HighLatency", "$1.10", "4,600", "3,000", "200", "2", "1 unpriced"],
    ]);
    await expect
      .poll(() => page.getByTestId("usage-tokens").locator("..").textContent())
      .toContain("3,000 cache read · 200 cache write");
    const top = await rows("Top sessions");
    expect(top.map((r) => [r[0], r[4], r[5]])).toEqual([
      [`PodCrashLooping · ${ids.s3.slice(0, 8)}`, "$2.00", "11,000"],
      [`PodCrashLooping · ${ids.s1.slice(0, 8)}`, "$1.20", "3,500"],
      [`HighLatency · ${ids.s2.slice(0, 8)}`, "$1.10", "4,600"],
    ]);
    await page.locator('[data-testid="usage-series-loaded"][data-query=""]').waitFor();
    await rig.shot("usage");
  }, 60_000);

  it("charts the cumulative cost by model and the average cost per session, per local day", async () => {
    const { page } = rig;
    await page.locator('[data-testid="usage-series-loaded"][data-query=""]').waitFor();
    // The days are the browser's calendar days: the seeded sessions' dates in its zone.
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    const dayOf = (ago: number) =>
      new Intl.DateTimeFormat("en-CA", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
      }).format(new Date(seededAt - ago));
    const cost = page.getByTestId("chart-cumulative-cost");
    const average = page.getByTestId("chart-average-cost");
    // Drawn: the stacked areas (one a model) and the columns of the days with sessions.
    await expect.poll(() => cost.locator("svg path").count()).toBeGreaterThan(1);
    await expect.poll(() => average.locator("svg rect").count()).toBeGreaterThan(0);
    expect(await cost.locator("..").textContent()).toContain("gemini-2.5-pro");
    // Their text alternatives: the figures' summaries and the daily table.
    expect(await cost.getAttribute("aria-label")).toBe(
      `Estimated cumulative cost by model over 31 days (${zone}): $4.30 in all; gemini-2.5-pro $3.20, gpt-5 $1.10`,
    );
    expect(await average.getAttribute("aria-label")).toBe(
      "Average estimated cost per session on the 3 days with sessions: from $1.10 to $2.00",
    );
    await page.getByText("Daily figures", { exact: true }).click();
    const days = await rows("Daily estimated cost");
    expect(days).toHaveLength(31);
    expect(days.filter((r) => r[1] !== "0")).toEqual([
      [dayOf(10 * DAY), "1", "$2.00", "$2.00", "$2.00"],
      [dayOf(3 * DAY), "1", "$1.20", "$1.20", "$3.20"],
      [dayOf(2 * DAY), "1", "$1.10", "$1.10", "$4.30"],
    ]);
    // A day without sessions: no average.
    expect(days.find((r) => r[1] === "0")?.slice(2)).toEqual(["$0.00", "—", expect.any(String)]);
    // The unpriced interaction is named, as on the cost card.
    expect(await page.getByRole("region", { name: "Cost over time" }).textContent()).toContain(
      "1 unpriced interaction",
    );
  }, 60_000);

  it("keeps the filters in the URL and follows them", async () => {
    const { page } = rig;
    await page.getByRole("button", { name: "Last 7d" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?range=7d");
    expect(await totals("range=7d")).toEqual({
      cost: "$2.30",
      tokens: "8,100",
      sessions: "2",
      interactions: "4",
      unpriced: "1",
    });
    await page.locator('[data-testid="usage-series-loaded"][data-query="range=7d"]').waitFor();
    expect(await page.getByTestId("chart-cumulative-cost").getAttribute("aria-label")).toContain(
      "$2.30 in all; gemini-2.5-pro $1.20, gpt-5 $1.10",
    );
    // Ranking is the summary's: the series is not asked for again.
    const seriesCalls: string[] = [];
    const onRequest = (r: { url: () => string }) => {
      if (r.url().includes("/api/v1/usage/series")) seriesCalls.push(r.url());
    };
    page.on("request", onRequest);
    await page.getByRole("button", { name: "Rank by tokens" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?range=7d&rank_by=tokens");
    await totals("range=7d&rank_by=tokens");
    page.off("request", onRequest);
    expect(seriesCalls).toEqual([]);
    expect((await rows("By model")).map((r) => r[0])).toEqual([
      "claude-sonnet-4",
      "gemini-2.5-pro",
      "gpt-5",
    ]);
    expect((await rows("Top sessions")).map((r) => r[0])).toEqual([
      `HighLatency · ${ids.s2.slice(0, 8)}`,
      `PodCrashLooping · ${ids.s1.slice(0, 8)}`,
    ]);
    await page.getByLabel("Alert type", { exact: true }).selectOption("HighLatency");
    const query = "range=7d&alert_type=HighLatency&rank_by=tokens";
    await expect.poll(() => new URL(page.url()).search).toBe(`?${query}`);
    expect(await totals(query)).toEqual({
      cost: "$1.10",
      tokens: "4,600",
      sessions: "1",
      interactions: "2",
      unpriced: "1",
    });
    // A link with the filters opens the same figures.
    await page.goto(rig.url("/usage?chain_id=k8s-chain"));
    expect(await totals("chain_id=k8s-chain")).toMatchObject({ cost: "$3.20", sessions: "2" });
  }, 60_000);

  it("links a top session to its page", async () => {
    const { page } = rig;
    await page.goto(rig.url("/usage"));
    await totals("");
    await page.getByRole("link", { name: `HighLatency · ${ids.s2.slice(0, 8)}` }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/sessions/${ids.s2}`);
  }, 60_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      await page.goto(rig.url("/usage"));
      await totals("");
      // The charts and their daily table are checked too.
      await page.locator('[data-testid="usage-series-loaded"][data-query=""]').waitFor();
      await page.getByText("Daily figures", { exact: true }).click();
      await page.getByRole("table", { name: "Daily estimated cost" }).waitFor();
      await showTheme(page, theme);
      const violations = await seriousAxeViolations(page);
      if (violations.length) found[theme] = violations;
      if (theme === "dark") {
        await page.getByText("Daily figures", { exact: true }).click(); // closed, as in "usage"
        await page.mouse.move(700, 1200); // no tooltip of the theme button in the picture
        await page.getByRole("tooltip").waitFor({ state: "hidden" });
        await rig.shot("usage-dark");
      }
    }
    expect(found).toEqual({});
    // The README's pictures come from this run.
    await mkdir(README_SHOTS, { recursive: true });
    for (const name of ["usage.png", "usage-dark.png"]) {
      await copyFile(resolve(SCREENSHOTS, name), resolve(README_SHOTS, name));
    }
  }, 60_000);
});
