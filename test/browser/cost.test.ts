import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const COST = resolve(ROOT, "test/e2e/testdata/cost");

/**
 * The estimated cost in Chromium: sessions of the e2e cost config (model_rates for the rated
 * model, a model without a rate) run through every service, then the list and the session page.
 * Rated: agent 0.0044 + executive summary 0.0014 USD; Mixed: an unpriced agent call and the
 * priced executive summary (0.0014, partial).
 */
describe("the estimated cost on the dashboard", () => {
  let rig: DashboardRig;
  let rated = "";
  let mixed = "";

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: COST,
      llmScriptPath: resolve(COST, "llm-script.yaml"),
    });
    rated = await submitAlert(rig.system, "Rated");
    mixed = await submitAlert(rig.system, "Mixed");
    await waitStatus(rig.system, rated, ["completed"], 60_000);
    await waitStatus(rig.system, mixed, ["completed"], 60_000);
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const row = (id: string) => rig.page.locator(`tr[data-session-id="${id}"]`);

  it("the session list has a Cost column; a partial estimate is marked and explains itself", async () => {
    await rig.page.goto(rig.url("/"));
    await rig.page.getByRole("columnheader", { name: "Cost" }).waitFor();
    await expect.poll(() => row(rated).locator(".cost").textContent()).toBe("$0.0058");
    const partial = row(mixed).locator(".cost");
    await expect.poll(() => partial.textContent()).toBe("$0.0014*");
    expect(await partial.getAttribute("data-completeness")).toBe("partial");
    await partial.hover();
    await rig.page
      .getByRole("tooltip")
      .getByText("Partial estimate: 1 LLM call without a price", { exact: false })
      .waitFor();
    await rig.shot("sessions-cost");
  });

  it("the session page's header shows the session's estimated cost", async () => {
    await rig.page.goto(rig.url(`/sessions/${rated}`));
    const facts = rig.page.getByRole("definition").filter({ has: rig.page.locator(".cost") });
    await expect.poll(() => facts.textContent()).toBe("$0.0058");
    expect(await rig.page.getByText("Estimated cost", { exact: true }).count()).toBe(1);
    await rig.page.goto(rig.url(`/sessions/${mixed}`));
    const partial = rig.page.locator("header .cost");
    await expect.poll(() => partial.textContent()).toBe("$0.0014*");
    expect(await partial.getAttribute("data-completeness")).toBe("partial");
    await rig.shot("session-cost");
  });

  it("the trace lists each LLM call's cost", async () => {
    await rig.page.goto(rig.url(`/sessions/${rated}/trace`));
    // The agent's one call (1,300 tokens) and the executive summary's (550).
    await rig.page.getByText("1300 tok · $0.0044", { exact: false }).waitFor({ timeout: 10_000 });
    await rig.page.getByText("550 tok · $0.0014", { exact: false }).waitFor({ timeout: 10_000 });
  });
});
