import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { SessionScore } from "@tarsy/contracts";
import { createDb } from "@tarsy/db";
import { insertSessionRows, insertSessionScoreRow } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, SCREENSHOTS, startDashboardRig } from "./support.ts";

const README_SHOTS = resolve(ROOT, "packages/dashboard/docs/screenshots");

const ANALYSIS = `## Evidence gathering
The agent listed the pods but **never read the kubelet logs**.

- premature_conclusion: the OOM diagnosis came before the memory metrics
- missed_available_tool: \`pods_log\` was available`;
const TOOLS = `### Missing tools
- a node-level memory pressure query`;

/**
 * Scores on the dashboard (issue #21) against the whole system: sessions with stored scores as
 * the judge leaves them (completed, poor, in progress, failed, none) and a running one, in the
 * list's Score column and the session page's Score card; "Score now" asks the API for a run.
 */
describe("session scores on the dashboard", () => {
  let rig: DashboardRig;
  const ids = { good: "", poor: "", scoring: "", failed: "", unscored: "", running: "" };

  beforeAll(async () => {
    rig = await startDashboardRig();
    const db = createDb({ url: rig.system.database.url });
    try {
      const insert = async (
        alertType: string,
        status: "completed" | "in_progress",
        chainId = "k8s-chain",
      ) => {
        const [id = ""] = await insertSessionRows(db.prisma, {
          count: 1,
          alertType,
          chainId,
          alertData: "score",
          status,
        });
        return id;
      };
      ids.good = await insert("PodCrashLooping", "completed");
      ids.poor = await insert("DiskPressure", "completed");
      ids.scoring = await insert("HighLatency", "completed");
      ids.failed = await insert("MemoryLeak", "completed");
      // Scored for real by "Score now": its chain must be one the demo configures.
      ids.unscored = await insert("NodeNotReady", "completed", "demo-incident");
      ids.running = await insert("CertExpiry", "in_progress");
      await insertSessionScoreRow(db.prisma, {
        sessionId: ids.good,
        status: "completed",
        totalScore: 72,
        scoreAnalysis: ANALYSIS,
        toolImprovementReport: TOOLS,
        failureTags: ["premature_conclusion", "missed_available_tool"],
      });
      await insertSessionScoreRow(db.prisma, {
        sessionId: ids.poor,
        status: "completed",
        totalScore: 20,
        scoreAnalysis: "Wrong conclusion.",
        failureTags: ["wrong_conclusion"],
      });
      await insertSessionScoreRow(db.prisma, { sessionId: ids.scoring, status: "in_progress" });
      await insertSessionScoreRow(db.prisma, {
        sessionId: ids.failed,
        status: "failed",
        errorMessage: "judge returned no score",
      });
    } finally {
      await db.close();
    }
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const card = () => rig.page.getByTestId("score-card");
  const button = () => card().getByRole("button", { name: /^(Score now|Re-score)$/ });

  it("the list's Score column colours by band and spins while scoring", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    const score = (id: string) => page.locator(`tr[data-session-id="${id}"] .score`);
    await expect.poll(() => score(ids.good).getAttribute("data-band")).toBe("good");
    expect(await score(ids.good).textContent()).toBe("72");
    expect(await score(ids.poor).getAttribute("data-band")).toBe("poor");
    expect(await score(ids.poor).textContent()).toBe("20");
    expect(await score(ids.scoring).getAttribute("data-scoring")).toBe("in_progress");
    await score(ids.scoring).getByRole("progressbar", { name: "Scoring" }).waitFor();
    expect(await score(ids.unscored).textContent()).toBe("—");
    expect(await score(ids.failed).textContent()).toBe("failed");
  }, 60_000);

  // Waits on GET /api/v1/sessions/:id/score.
  it("the Score card shows the score, band, failure tags and the reports as markdown", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${ids.good}`));
    await expect.poll(() => card().getByTestId("score-total").textContent()).toBe("72/100");
    expect(await card().getByTestId("score-band").textContent()).toBe("Good");
    const tags = card().getByRole("list", { name: "Failure tags" }).getByRole("listitem");
    expect(await tags.allTextContents()).toEqual(["premature conclusion", "missed available tool"]);
    await card().getByRole("button", { name: "Score analysis" }).click();
    await card()
      .locator("#score-analysis-content strong")
      .getByText("never read the kubelet logs")
      .waitFor();
    await card().getByRole("button", { name: "Tool improvement report" }).click();
    await card().locator("#score-tools-content h3").getByText("Missing tools").waitFor();
    expect(await button().textContent()).toBe("Re-score");
    expect(await button().isEnabled()).toBe(true);
    await mkdir(README_SHOTS, { recursive: true });
    await card().screenshot({ path: resolve(SCREENSHOTS, "score-card.png") });
    await card().screenshot({ path: resolve(README_SHOTS, "score-card.png") });

    await page.goto(rig.url(`/sessions/${ids.failed}`));
    await card().getByText("Scoring failed: judge returned no score").waitFor();
  }, 60_000);

  it("Score now / Re-score is disabled with the reason while running or being scored", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${ids.running}`));
    await card().getByText("The session has not ended yet").waitFor();
    expect(await button().textContent()).toBe("Score now");
    expect(await button().isDisabled()).toBe(true);
    expect(await button().getAttribute("aria-describedby")).toBe("score-blocker");

    await page.goto(rig.url(`/sessions/${ids.scoring}`));
    await card().getByText("Scoring is in progress").waitFor();
    expect(await button().isDisabled()).toBe(true);
    expect(await card().getAttribute("data-scoring")).toBe("in_progress");
  }, 60_000);

  // Waits on POST /api/v1/sessions/:id/score and the scoring worker (session.score_updated).
  it("Score now starts a run and the card follows it live", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${ids.unscored}`));
    await card().getByText("Not scored yet.").waitFor();
    expect(await button().textContent()).toBe("Score now");
    await button().click();
    // The run's session.score_updated events reach the page without a reload: the card ends
    // with the scripted judge's score (fixtures/llm-script.yaml), as the API reports it.
    await expect
      .poll(() => card().getAttribute("data-scoring"), { timeout: 90_000 })
      .toBe("completed");
    await expect.poll(() => card().getByTestId("score-total").textContent()).toBe("81/100");
    const stored = await rig.system.api<SessionScore>(`/api/v1/sessions/${ids.unscored}/score`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ status: "completed", total_score: 81 });
    await expect.poll(() => button().textContent()).toBe("Re-score");
    expect(await button().isEnabled()).toBe(true);
  }, 150_000);

  it("reaches the card's controls by keyboard", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${ids.good}`));
    await card().getByTestId("score-total").waitFor();
    await card().getByRole("heading", { name: "Score", exact: true }).scrollIntoViewIfNeeded();
    await page.locator("#score-h").evaluate((el) => {
      el.setAttribute("tabindex", "-1");
      (el as HTMLElement).focus();
    });
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab");
      names.push(await page.evaluate(() => document.activeElement?.textContent?.trim() ?? ""));
    }
    expect(names).toEqual(
      expect.arrayContaining(["Re-score", "Score analysis", "Tool improvement report"]),
    );
    // Back to the report's accordion by keyboard, and open it with Enter.
    for (let i = 0; i < 6; i++) {
      const at = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
      if (at === "Tool improvement report") break;
      await page.keyboard.press("Shift+Tab");
    }
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe(
      "Tool improvement report",
    );
    await page.keyboard.press("Enter");
    await expect
      .poll(() =>
        card()
          .getByRole("button", { name: "Tool improvement report" })
          .getAttribute("aria-expanded"),
      )
      .toBe("true");
    await card().locator("#score-tools-content").getByText("Missing tools").waitFor();
  }, 60_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      for (const path of [`/sessions/${ids.good}`, `/sessions/${ids.scoring}`, "/"]) {
        await page.goto(rig.url(path));
        if (path === "/") await page.locator(`tr[data-session-id="${ids.good}"] .score`).waitFor();
        else await card().waitFor();
        await showTheme(page, theme);
        if (path === `/sessions/${ids.good}`) {
          await card().getByTestId("score-total").waitFor();
          await card().getByRole("button", { name: "Score analysis" }).click();
        }
        const violations = await seriousAxeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
      }
    }
    expect(found).toEqual({});
  }, 300_000);
});
