import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const LABELS = resolve(ROOT, "test/e2e/testdata/labels");

/**
 * Session labels in Chromium: sessions of the e2e labels chains (one labelled noise by the
 * built-in map, one with two labels of a multi map, one with none) run through every service.
 */
describe("session label chips", () => {
  let rig: DashboardRig;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: LABELS,
      llmScriptPath: resolve(LABELS, "llm-script.yaml"),
    });
    for (const type of ["LabelValid", "LabelMulti", "LabelAbsent"]) {
      ids[type] = await submitAlert(rig.system, type);
    }
    for (const id of Object.values(ids)) await waitStatus(rig.system, id, ["completed"], 120_000);
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const chipsIn = (scope: ReturnType<DashboardRig["page"]["locator"]>) =>
    scope.getByTestId("session-labels").locator(".MuiChip-label").allTextContents();

  it("the list shows each session's labels as chips; the Label filter keeps one label's sessions", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    const row = (id: string) =>
      page.locator("tr", { has: page.locator(`a[href="/sessions/${id}"]`) });
    await row(ids.LabelMulti ?? "").waitFor({ timeout: 30_000 });
    await expect
      .poll(() => chipsIn(row(ids.LabelMulti ?? "")))
      .toEqual(["page", "modify_detection_rules"]);
    expect(await chipsIn(row(ids.LabelValid ?? ""))).toEqual(["noise"]);
    expect(
      await row(ids.LabelAbsent ?? "")
        .getByTestId("session-labels")
        .count(),
    ).toBe(0);

    await page.locator("#filter-label").selectOption("noise");
    await expect.poll(() => page.url()).toContain("label=noise");
    await expect.poll(() => page.locator(`a[href="/sessions/${ids.LabelMulti}"]`).count()).toBe(0);
    expect(await chipsIn(row(ids.LabelValid ?? ""))).toEqual(["noise"]);
  });

  it("the session page shows its labels next to its status", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${ids.LabelMulti}`));
    const heading = page.locator("#session-h");
    await heading.getByTestId("session-labels").waitFor({ timeout: 30_000 });
    expect(await chipsIn(heading)).toEqual(["page", "modify_detection_rules"]);
  });
});
