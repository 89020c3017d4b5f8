import { resolve } from "node:path";
import type { ActionList } from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { EVERYTHING_ENV, ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const APPROVALS = resolve(ROOT, "test/e2e/testdata/approvals");
/** Whoever submits the alerts (`submitAlert`): four eyes keeps them from approving. */
const SUBMITTER = "e2e";
const APPROVER = "alice@example.com";

/**
 * Approvals in Chromium (#30), on the e2e approvals config: an action agent's mutating call
 * waits for a person. The Approvals page shows it live with its exact call, the agent's masked
 * reason and its timeout; the submitter is refused by four eyes; another person approves it
 * there, and the session page shows the decision and the call's result. A request is denied
 * from the session page.
 */
describe("approvals on the dashboard", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: APPROVALS,
      llmScriptPath: resolve(APPROVALS, "llm-script.yaml"),
      env: EVERYTHING_ENV,
      headers: { "x-forwarded-user": APPROVER },
    });
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const pendingOf = (sessionId: string) =>
    until(
      async () => {
        const r = await rig.system.api<ActionList>(`/api/v1/actions?session_id=${sessionId}`);
        return r.body.actions.find((a) => a.status === "pending") ?? null;
      },
      { what: `a pending request of ${sessionId}`, timeoutMs: 60_000 },
    );

  it("shows a request live with its exact call and reason; four eyes; approved there", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Approvals" })
      .click();
    await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
    await page.getByTestId("no-actions").waitFor();
    expect(await page.getByTestId("no-actions").textContent()).toBe(
      "Nothing is waiting for approval.",
    );

    // Submitted while the page is open: the request appears without a reload.
    const id = await submitAlert(rig.system, "ApproveMe", { case: "case-granted" });
    const card = page.getByRole("article", { name: "everything.get-sum" });
    await card.waitFor({ timeout: 60_000 });
    await card.getByText("waiting for approval", { exact: true }).waitFor();
    expect(await card.getByRole("link", { name: /^ApproveMe session / }).getAttribute("href")).toBe(
      `/sessions/${id}`,
    );
    const reason = (await card.getByTestId("action-reason").textContent()) ?? "";
    expect(reason).toContain("OOM-killed 14 times");
    expect(reason).toMatch(/password=\[MASKED_[A-Z_]+\]/);
    expect(reason).not.toContain("hunter2secret");
    const args =
      (await card.getByRole("region", { name: "Arguments of everything.get-sum" }).textContent()) ??
      "";
    expect(JSON.parse(args)).toEqual({ a: 2, b: 3 });
    // The dry-run form's answer (echo, by the approvals config), shown before anyone decides.
    expect(
      await card.getByRole("region", { name: "Dry run of everything.get-sum" }).textContent(),
    ).toBe("Echo: dry run: would sum");
    expect(await card.getByTestId("action-expiry").textContent()).toMatch(
      /^Counts as denied in (9|10)m/,
    );
    for (const theme of THEMES) {
      await showTheme(page, theme);
      expect(await seriousAxeViolations(page), `axe, ${theme} theme`).toEqual([]);
    }
    await showTheme(page, "light");
    await rig.shot("approvals-pending");

    // The submitter may not approve (four eyes): the API's refusal is shown, nothing changes.
    const own = await rig.pageAs({ "x-forwarded-user": SUBMITTER });
    await own.goto(rig.url("/actions"));
    const ownCard = own.getByRole("article", { name: "everything.get-sum" });
    await ownCard.getByRole("button", { name: "Approve" }).click();
    await ownCard
      .getByRole("alert")
      .getByText(/four eyes/)
      .waitFor();
    await ownCard.getByText("waiting for approval", { exact: true }).waitFor();
    await own.context().close();
    expect((await pendingOf(id)).status).toBe("pending");

    // Approved here, with a comment: it leaves the pending list.
    await card.getByLabel("Comment (optional)").fill("go ahead");
    await card.getByRole("button", { name: "Approve" }).click();
    await page.getByTestId("no-actions").waitFor();
    expect((await waitStatus(rig.system, id, ["completed"], 90_000)).status).toBe("completed");

    // The session page: the decision, who made it, and what the call did.
    await page.goto(rig.url(`/sessions/${id}`));
    const section = page.getByRole("region", { name: "Approvals" });
    const decided = section.getByRole("article", { name: "everything.get-sum" });
    await decided.getByText("call succeeded", { exact: true }).waitFor();
    expect(await decided.getByTestId("action-decision").textContent()).toMatch(
      new RegExp(`^Approved by ${APPROVER}, .*: “go ahead”$`),
    );
    expect(
      await decided.getByRole("region", { name: "Result of everything.get-sum" }).textContent(),
    ).toContain("The sum of 2 and 3 is 5.");
    expect(await decided.getByRole("button", { name: "Approve" }).count()).toBe(0);

    // Every request stays listed under All.
    await page.goto(rig.url("/actions?status=all"));
    await page
      .getByRole("article", { name: "everything.get-sum" })
      .getByText("approved", { exact: true })
      .waitFor();
  });

  it("denies a request from the session page; the page follows it live", async () => {
    const { page } = rig;
    const id = await submitAlert(rig.system, "ApproveMe", { case: "case-denied" });
    await pendingOf(id);
    await page.goto(rig.url(`/sessions/${id}`));
    const section = page.getByRole("region", { name: "Approvals" });
    await section.getByText("1 waiting for approval", { exact: true }).waitFor();
    const card = section.getByRole("article", { name: "everything.get-sum" });
    await card.getByLabel("Comment (optional)").fill("not during the change freeze");
    await card.getByRole("button", { name: "Deny" }).click();
    await card.getByText("denied", { exact: true }).waitFor();
    expect(await card.getByTestId("action-decision").textContent()).toMatch(
      new RegExp(`^Denied by ${APPROVER}, .*: “not during the change freeze”$`),
    );
    expect(await section.getByText("1 waiting for approval", { exact: true }).count()).toBe(0);
    await rig.shot("approvals-session-denied");
    expect((await waitStatus(rig.system, id, ["completed"], 90_000)).status).toBe("completed");
    // The call was never made.
    await page.reload();
    await page
      .getByRole("region", { name: "Approvals" })
      .getByText("denied", { exact: true })
      .waitFor();
    expect(await page.getByText("call succeeded", { exact: true }).count()).toBe(0);
  });
});
