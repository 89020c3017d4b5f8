import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { DEMO_ALERT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

/**
 * Deleting a session from its page in Chromium, against the whole system: the confirm dialog,
 * the way back to the list, and the other dashboards open on it (the list drops the row when
 * `session.deleted` arrives; the session's own page says it was deleted).
 */
describe("deleting a session from the dashboard", () => {
  let rig: DashboardRig;
  let done = "";
  let running = "";

  beforeAll(async () => {
    rig = await startDashboardRig();
    done = await submitAlert(rig.system, DEMO_ALERT.alert_type, DEMO_ALERT.data);
    running = await submitAlert(rig.system, "PodCrashLooping", { note: "SLOW-CANCEL" });
    await waitStatus(rig.system, done, ["completed"], 120_000);
    await waitStatus(rig.system, running, ["in_progress"], 60_000);
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const rowLink = (page: DashboardRig["page"], id: string) =>
    page.locator(`table a[href="/sessions/${id}"]`);

  it("offers no delete while a session runs", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${running}`));
    await page.getByRole("button", { name: "Cancel session" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Delete session" }).count()).toBe(0);
  });

  it("deletes an ended session after a confirmation, goes to the list, and every open dashboard drops it", async () => {
    const { page } = rig;
    // Another dashboard on the list, one on the session itself.
    const list = await rig.pageAs({});
    await list.goto(rig.url("/"));
    await rowLink(list, done).waitFor({ timeout: 30_000 });
    const watcher = await rig.pageAs({});
    await watcher.goto(rig.url(`/sessions/${done}`));
    await watcher.getByRole("button", { name: "Delete session" }).waitFor({ timeout: 30_000 });
    await watcher.getByTestId("connection-status").getByText("Live").waitFor({ timeout: 15_000 });
    await list.getByTestId("connection-status").getByText("Live").waitFor({ timeout: 15_000 });

    await page.goto(rig.url(`/sessions/${done}`));
    await page.getByRole("button", { name: "Delete session" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this session?" });
    await dialog.waitFor();
    // Changing one's mind deletes nothing.
    await dialog.getByRole("button", { name: "Keep it" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await rig.system.api(`/api/v1/sessions/${done}`)).status).toBe(200);

    await page.getByRole("button", { name: "Delete session" }).click();
    await dialog.getByRole("button", { name: "Delete", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/", { timeout: 15_000 });
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await rowLink(page, running).waitFor({ timeout: 15_000 });
    expect(await rowLink(page, done).count()).toBe(0);
    expect((await rig.system.api(`/api/v1/sessions/${done}`)).status).toBe(404);

    // The other dashboards, without a reload.
    await rowLink(list, done).waitFor({ state: "detached", timeout: 15_000 });
    expect(await rowLink(list, running).count()).toBe(1);
    await watcher.getByText(`Session ${done} was deleted.`).waitFor({ timeout: 15_000 });
    await rig.shot("session-deleted");
    await list.close();
    await watcher.close();
  }, 120_000);
});
