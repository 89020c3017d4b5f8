import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { EVERYTHING_ENV, ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const ACTIONS = resolve(ROOT, "test/e2e/testdata/actions");

/**
 * Action stages in Chromium: the e2e actions config (an investigation, then an action stage
 * whose scripted agent acts or declines; an action agent in a mixed stage).
 */
describe("action stages on the dashboard", () => {
  let rig: DashboardRig;
  const ids = { acts: "", declines: "", mixed: "" };

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: ACTIONS,
      llmScriptPath: resolve(ACTIONS, "llm-script.yaml"),
      env: EVERYTHING_ENV,
    });
    ids.acts = await submitAlert(rig.system, "Acts");
    ids.declines = await submitAlert(rig.system, "Declines");
    ids.mixed = await submitAlert(rig.system, "Mixed");
    for (const id of Object.values(ids)) {
      await waitStatus(rig.system, id, ["completed"], 120_000);
    }
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  /** The stage's header on the session page: its heading and the chips beside it. */
  const stageHeader = (name: string) =>
    rig.page.getByRole("heading", { level: 3, name }).locator("xpath=..");

  it("marks the action stage, and that its agent acted", async () => {
    await rig.page.goto(rig.url(`/sessions/${ids.acts}`));
    const remediate = stageHeader("2. remediate");
    await remediate.getByText("Action", { exact: true }).waitFor();
    await remediate.getByText("Acted", { exact: true }).waitFor();
    // The investigation before it is not an action stage.
    const investigate = stageHeader("1. investigate");
    await investigate.getByText("completed", { exact: true }).waitFor();
    expect(await investigate.getByText("Action", { exact: true }).count()).toBe(0);
    // After it, the compose stage's card: the amended report, the session's final analysis.
    const amended = rig.page.getByRole("region", {
      name: "Amended report remediate - Amended Report",
    });
    await amended.getByRole("heading", { name: "3. remediate - Amended Report" }).waitFor();
    await amended.getByText("amended report", { exact: true }).waitFor();
    await amended.getByText("completed", { exact: true }).waitFor();
    await rig.shot("session-action-stage");
  });

  it("says when the action agent declined", async () => {
    await rig.page.goto(rig.url(`/sessions/${ids.declines}`));
    const remediate = stageHeader("2. remediate");
    await remediate.getByText("No action taken", { exact: true }).waitFor();
    expect(await remediate.getByText("Acted", { exact: true }).count()).toBe(0);
  });

  it("a mixed stage is no action stage", async () => {
    await rig.page.goto(rig.url(`/sessions/${ids.mixed}`));
    const stage = stageHeader("1. investigate-and-act");
    await stage.getByText("completed", { exact: true }).waitFor();
    expect(await stage.getByText("Action", { exact: true }).count()).toBe(0);
  });

  it("the session list badges the sessions with an action stage", async () => {
    await rig.page.goto(rig.url("/"));
    const row = (id: string) => rig.page.locator(`tr[data-session-id="${id}"]`);
    await row(ids.acts).getByText("Action", { exact: true }).waitFor();
    await row(ids.declines).getByText("Action", { exact: true }).waitFor();
    await row(ids.mixed).waitFor();
    expect(await row(ids.mixed).getByText("Action", { exact: true }).count()).toBe(0);
  });

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      await page.goto(rig.url(`/sessions/${ids.acts}`));
      await stageHeader("2. remediate").getByText("Acted", { exact: true }).waitFor();
      await showTheme(page, theme);
      const violations = await seriousAxeViolations(page);
      if (violations.length) found[theme] = violations;
    }
    expect(found).toEqual({});
  }, 120_000);
});
