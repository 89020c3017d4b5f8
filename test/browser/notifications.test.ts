import {
  type FakeSlack,
  startFakeSlack,
  startWebhookReceiver,
  until,
  type WebhookReceiver,
} from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { notificationsStack, submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

/**
 * Whether Slack and the webhooks were told, on the session page: the e2e notifications config
 * (a loopback Slack Web API and a loopback webhook receiver), Slack down for the first session.
 */
describe("the session page's Notifications card", () => {
  let rig: DashboardRig;
  let slack: FakeSlack;
  let hook: WebhookReceiver;
  let sessionId = "";

  beforeAll(async () => {
    slack = await startFakeSlack();
    hook = await startWebhookReceiver();
    rig = await startDashboardRig(notificationsStack(slack, hook, "browser-webhook-secret"));
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
    await slack?.close();
    await hook?.close();
  }, 60_000);

  const card = () => rig.page.getByTestId("notifications-card");
  const row = (target: string, event: string) =>
    card()
      .getByRole("row")
      .filter({ has: rig.page.getByRole("cell", { name: target, exact: true }) })
      .filter({ has: rig.page.getByRole("cell", { name: event, exact: true }) });

  it("shows a send being retried with its error, then sent once Slack is back, without a reload", async () => {
    slack.down = 503;
    sessionId = await submitAlert(rig.system, "Notified", { summary: "disk filling up on node-7" });
    await waitStatus(rig.system, sessionId, ["completed"], 90_000);
    await rig.page.goto(rig.url(`/sessions/${sessionId}`));
    // The webhook took both events; Slack (no thread to answer in: the outcome only) waits.
    await row("Webhook 1", "started").getByText("sent", { exact: true }).waitFor();
    await row("Webhook 1", "completed").getByText("sent", { exact: true }).waitFor();
    const waiting = row("Slack", "completed");
    // Tried and failed, to be tried again.
    await waiting.getByText("retrying", { exact: true }).waitFor({ timeout: 30_000 });
    await waiting.getByText("Slack answered HTTP 503").waitFor({ timeout: 30_000 });
    await rig.shot("session-notifications-retrying");

    slack.down = null;
    await until(async () => (slack.posts.length > 0 ? true : undefined), {
      what: "the Slack post",
      timeoutMs: 30_000,
    });
    await waiting.getByText("sent", { exact: true }).waitFor({ timeout: 30_000 });
    await expect.poll(() => waiting.getByText("Slack answered HTTP 503").count()).toBe(0);
    expect(await card().getByRole("row").count()).toBe(4); // the header and three sends
  }, 180_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      await page.goto(rig.url(`/sessions/${sessionId}`));
      await card().waitFor();
      await showTheme(page, theme);
      const violations = await seriousAxeViolations(page);
      if (violations.length) found[theme] = violations;
    }
    expect(found).toEqual({});
  }, 120_000);
});
