import { join } from "node:path";
import type { SessionDetail, TimelineResponse } from "@tarsy/contracts";
import { createDb } from "@tarsy/db";
import { insertSessionRows, insertTimelineEventRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AxeViolation,
  seriousAxeViolations,
  showTheme,
  THEMES,
} from "../../packages/dashboard/testing/axe.ts";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { DEMO_ALERT } from "../e2e/support.ts";
import { type DashboardRig, inViewport, SCREENSHOTS, startDashboardRig } from "./support.ts";

/**
 * The session page in Chromium on a finished demo investigation (triage, two parallel agents,
 * synthesis): the stepper, agent tabs, tool calls, thinking, deep links; and a forged session of
 * 5,000 events with 100 KB tool results, which the page virtualises.
 */
describe("the session page", () => {
  let rig: DashboardRig;
  let sessionId = "";
  let detail: SessionDetail;
  let timeline: TimelineResponse;
  const readClipboard = () => rig.page.evaluate(() => navigator.clipboard.readText());
  /**
   * A fresh navigation: Chromium turns a visit to the URL already shown into a reload, which
   * restores the old scroll position.
   */
  const open = async (path: string) => {
    await rig.page.goto("about:blank");
    await rig.page.goto(rig.url(path));
  };

  beforeAll(async () => {
    rig = await startDashboardRig();
    await rig.page
      .context()
      .grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.url("") });
    sessionId = await submitAlert(rig.system, DEMO_ALERT.alert_type, DEMO_ALERT.data);
    await waitStatus(rig.system, sessionId, ["completed"], 120_000);
    detail = (await rig.system.api<SessionDetail>(`/api/v1/sessions/${sessionId}`)).body;
    timeline = (await rig.system.api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`))
      .body;
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const events = (type: string | null, agent?: string) => {
    const execution = detail.stages
      .flatMap((s) => s.executions)
      .find((e) => e.agent_name === agent);
    return timeline.events.filter(
      (e) => (!type || e.event_type === type) && (!agent || e.execution_id === execution?.id),
    );
  };

  it("shows every stage on the stepper with its status", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    const steps = page.getByRole("list", { name: "Stages" }).getByRole("listitem");
    await steps.first().waitFor();
    const stages = detail.stages.filter((s) => s.kind !== "chat");
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(await steps.allTextContents()).toEqual(
      stages.map((s) => `${s.stage_index}. ${s.stage_name}completed`),
    );
    // A cancelled investigation: its stage reads "cancelled".
    const cancelled = await submitAlert(rig.system, "PodCrashLooping", { note: "SLOW-CANCEL" });
    await waitStatus(rig.system, cancelled, ["in_progress"], 60_000);
    await open(`/sessions/${cancelled}`);
    await page.locator('article[aria-busy="true"]').first().waitFor({ timeout: 60_000 });
    // An optional reason goes with the cancel; the page then says who cancelled and why.
    await page.getByRole("textbox", { name: "Cancel reason" }).fill("duplicate of INC-123");
    await page.getByRole("button", { name: "Cancel session" }).click();
    await page
      .getByRole("list", { name: "Stages" })
      .getByRole("listitem")
      .filter({ hasText: "cancelled" })
      .first()
      .waitFor({ timeout: 60_000 });
    const card = page.getByRole("region", { name: "Investigation cancelled" });
    await expect
      .poll(() => card.getByTestId("session-cancelled").textContent(), { timeout: 30_000 })
      .toBe("Cancelled by api-client: duplicate of INC-123");
    // A cancellation, not an error: no error card, and the status chip's tooltip says it too.
    expect(await page.getByTestId("session-error").count()).toBe(0);
    expect(
      await page.getByRole("heading", { level: 1 }).locator("[title]").getAttribute("title"),
    ).toBe("Cancelled by api-client: duplicate of INC-123");
    await rig.shot("session-stepper-cancelled");
  }, 180_000);

  it("shows the parallel agents as tabs and the synthesis as a card after them", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    const agents = page.getByRole("tablist", { name: "Parallel agents" });
    const logTab = agents.getByRole("tab", { name: /LogAgent/ });
    const eventsTab = agents.getByRole("tab", { name: /EventsAgent/ });
    await logTab.waitFor();
    expect(await logTab.textContent()).toContain("completed");
    expect(await eventsTab.textContent()).toContain("completed");
    expect(await logTab.getAttribute("aria-selected")).toBe("true");
    const logText = "Logs: heap climbs to 1890Mi";
    const eventsText = "Events: the kernel OOM-killed";
    await page.getByText(logText).waitFor();
    expect(await page.getByText(eventsText).count()).toBe(0);
    await eventsTab.click();
    await page.getByText(eventsText).waitFor();
    expect(await page.getByText(logText).count()).toBe(0);
    const synthesis = page.getByRole("region", { name: /^Synthesis/ });
    await synthesis.getByRole("heading", { name: "Root cause" }).waitFor();
    // After the agents on the page.
    const tabsY = (await agents.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
    expect((await synthesis.boundingBox())?.y ?? 0).toBeGreaterThan(tabsY);
    await rig.shot("session-parallel-tabs");
  }, 60_000);

  it("opens a tool call on demand, copies its result, and marks a masked one", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    const [getPods] = events("llm_tool_call").filter(
      (e) => (e.metadata as { tool_name?: string }).tool_name === "get_pods",
    );
    expect(getPods?.content).toContain("CrashLoopBackOff");
    const toggle = page.getByRole("button", { name: "Tool call demo-cluster.get_pods" });
    const result = page.getByRole("region", { name: "result of demo-cluster.get_pods" });
    await toggle.waitFor();
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    expect(await result.count()).toBe(0); // not rendered while shut
    await toggle.click();
    await result
      .getByText(/CrashLoopBackOff/)
      .first()
      .waitFor();
    await page.getByRole("button", { name: "Copy result of demo-cluster.get_pods" }).click();
    await expect(readClipboard()).resolves.toBe(getPods?.content);
    await page.getByRole("button", { name: "Copy arguments of demo-cluster.get_pods" }).click();
    expect(JSON.parse(await readClipboard())).toEqual({ namespace: "payments" });

    await page
      .getByRole("tablist", { name: "Parallel agents" })
      .getByRole("tab", { name: /EventsAgent/ })
      .click();
    const secret = page.getByRole("button", { name: "Tool call demo-cluster.get_secret" });
    await secret.getByText("masked", { exact: true }).waitFor();
    expect(
      await page
        .getByRole("button", { name: "Tool call demo-cluster.get_events" })
        .getByText("masked")
        .count(),
    ).toBe(0);
    await rig.shot("session-tool-call");
  }, 60_000);

  it("keeps thinking collapsed until asked", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    const thought = "The alert names a crash-looping pod in payments.";
    expect(events("llm_thinking").some((e) => e.content.startsWith(thought))).toBe(true);
    const thinking = page.getByRole("button", { name: /^Thinking/ }).first();
    await thinking.waitFor();
    expect(await thinking.getAttribute("aria-expanded")).toBe("false");
    expect(await page.getByText(thought).count()).toBe(0);
    await thinking.click();
    await page.getByText(thought).waitFor();
    expect(await thinking.getAttribute("aria-expanded")).toBe("true");
  }, 60_000);

  it("opens a deep link at its item, in the agent tab that holds it, and copies one", async () => {
    const { page } = rig;
    const target = events(null, "EventsAgent").at(-1);
    expect(target).toBeDefined();
    await open(`/sessions/${sessionId}#event-${target?.id}`);
    const eventsTab = page
      .getByRole("tablist", { name: "Parallel agents" })
      .getByRole("tab", { name: /EventsAgent/ });
    await page.waitForFunction((id) => document.getElementById(`event-${id}`) !== null, target?.id);
    expect(await eventsTab.getAttribute("aria-selected")).toBe("true");
    await expect.poll(() => inViewport(page, `#event-${target?.id}`)).toBe(true);

    const entry = page.locator(`#event-${target?.id}`);
    await entry.getByRole("button", { name: /^Copy link to this/ }).click();
    await expect(readClipboard()).resolves.toBe(
      rig.url(`/sessions/${sessionId}#event-${target?.id}`),
    );
  }, 60_000);

  it("has no serious accessibility violations on the session and trace pages, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, AxeViolation[]> = {};
    const audit = async (where: string) => {
      const violations = await seriousAxeViolations(page);
      if (violations.length) found[where] = violations;
    };
    for (const theme of THEMES) {
      await open(`/sessions/${sessionId}`);
      await page.getByRole("heading", { name: "Final analysis" }).waitFor();
      await showTheme(page, theme);
      await page.getByRole("button", { name: "Tool call demo-cluster.get_pods" }).click();
      await page
        .getByRole("button", { name: /^Thinking/ })
        .first()
        .click();
      await page.getByRole("tab", { name: /EventsAgent/ }).click();
      await page.getByRole("button", { name: "Tool call demo-cluster.get_secret" }).waitFor();
      await page.getByRole("button", { name: "Alert data" }).click();
      await page.getByRole("region", { name: "alert payload" }).waitFor();
      await audit(`${theme} session`);
      await open(`/sessions/${sessionId}/trace`);
      await page
        .getByRole("button", { name: /^LLM iteration/ })
        .first()
        .click();
      await page.getByRole("list", { name: "Conversation" }).waitFor();
      await audit(`${theme} trace`);
    }
    expect(found).toEqual({});
  }, 120_000);

  it("opens a session of 5,000 events with 100 KB tool results, virtualised", async () => {
    const { page } = rig;
    const db = createDb({ url: rig.system.database.url });
    let big = "";
    let ids: string[] = [];
    try {
      [big = ""] = await insertSessionRows(db.prisma, {
        count: 1,
        alertType: "PodCrashLooping",
        chainId: detail.chain_id,
        alertData: JSON.stringify({ note: "a long one" }),
        status: "completed",
      });
      const pods = JSON.stringify(
        Array.from({ length: 1200 }, (_, i) => ({
          name: `payments-api-${i}`,
          status: "Running",
          restarts: i % 7,
        })),
      );
      expect(pods.length).toBeGreaterThan(60_000);
      const huge = `${pods}${" ".repeat(100_000 - pods.length)}`;
      const tools = await insertTimelineEventRows(db.prisma, big, {
        count: 10,
        eventType: "llm_tool_call",
        content: huge,
        metadata: { server_name: "demo-cluster", tool_name: "get_pods", arguments: { n: 1 } },
      });
      const responses = await insertTimelineEventRows(db.prisma, big, {
        count: 4_990,
        eventType: "llm_response",
        content: "Row {n}: the agent looked at one more thing.",
      });
      ids = [...tools, ...responses];
    } finally {
      await db.close();
    }
    expect(ids).toHaveLength(5_000);

    await open(`/sessions/${big}`);
    await page
      .getByText("Row 11: the agent looked at one more thing.")
      .waitFor({ timeout: 30_000 });
    const rendered = await page.locator("[data-event-id]").count();
    expect(rendered).toBeGreaterThan(10);
    expect(rendered).toBeLessThan(200);
    // The 100 KB results stay unrendered until a tool call is opened.
    expect(await page.getByRole("region", { name: /^result of/ }).count()).toBe(0);
    await page.getByRole("button", { name: "Tool call demo-cluster.get_pods" }).first().click();
    await page
      .getByRole("region", { name: "result of demo-cluster.get_pods" })
      .getByText(/payments-api-1199/)
      .waitFor();
    // The window only: a full-page shot of 5,000 rows is a picture of placeholders.
    await page.screenshot({ path: join(SCREENSHOTS, "session-large.png") });

    // To the end: the last item is there, and still only a window of the list is.
    const last = ids[ids.length - 1];
    await expect
      .poll(
        async () => {
          await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
          return inViewport(page, `#event-${last}`);
        },
        { timeout: 30_000, interval: 300 },
      )
      .toBe(true);
    await page.getByText("Row 5000: the agent looked at one more thing.").waitFor();
    expect(await page.locator("[data-event-id]").count()).toBeLessThan(200);

    // A deep link into the middle of the list scrolls the virtualiser to it.
    const middle = ids[2_500];
    await open(`/sessions/${big}#event-${middle}`);
    await expect.poll(() => inViewport(page, `#event-${middle}`), { timeout: 30_000 }).toBe(true);
  }, 180_000);

  it("renders an answer as markdown while it streams, without flicker", async () => {
    const { page } = rig;
    const slow = await submitAlert(rig.system, "PodCrashLooping", { note: "SLOW-MARKDOWN" });
    await waitStatus(rig.system, slow, ["in_progress"], 60_000);
    await open(`/sessions/${slow}`);
    // Sampled at every frame from the first frame the heading shows until the answer is done:
    // the letters of its rendered text (markup such as `|` or `**` turns into a table or bold
    // text as its block completes, so only the words are compared), whether it was still
    // streaming, whether the markdown was rendered, and whether the heading's node was
    // replaced (a finished block drawn again).
    const frames = await page.evaluate(
      () =>
        new Promise<{ words: string; busy: boolean; formatted: boolean; replaced: boolean }[]>(
          (done, fail) => {
            const out: { words: string; busy: boolean; formatted: boolean; replaced: boolean }[] =
              [];
            let heading: Element | undefined;
            const giveUp = setTimeout(() => fail(new Error("the answer did not finish")), 60_000);
            const tick = () => {
              const h2 = [...document.querySelectorAll("[data-event-id] .markdown h2")].find(
                (el) => el.textContent === "Slow triage",
              );
              const entry = h2?.closest("[data-event-id]");
              const markdown = entry?.querySelector(".markdown");
              if (h2 && entry && markdown) {
                const busy = entry.getAttribute("aria-busy") === "true";
                out.push({
                  words: (markdown.textContent ?? "").replace(/[^A-Za-z]/g, ""),
                  busy,
                  formatted: Boolean(markdown.querySelector("strong")),
                  replaced: heading !== undefined && heading !== h2,
                });
                heading = h2;
                const last = out.length - 1;
                // Done once it has stopped streaming for a few frames after streaming was seen.
                if (!busy && out.some((f) => f.busy) && out.slice(-5).every((f) => !f.busy)) {
                  clearTimeout(giveUp);
                  done(out.slice(0, last + 1));
                  return;
                }
              }
              requestAnimationFrame(tick);
            };
            requestAnimationFrame(tick);
          },
        ),
    );
    const streaming = frames.filter((f) => f.busy);
    // Seen streaming over many frames, rendered as markdown (headings, bold) while streaming.
    expect(streaming.length).toBeGreaterThan(10);
    expect(streaming.some((f) => f.formatted)).toBe(true);
    // No flicker: every frame shows all the words of the frame before (never fewer, never
    // blank), and the heading is one node throughout, across the end of the stream too.
    const lost = frames.filter((f, i) => i > 0 && !f.words.startsWith(frames[i - 1]?.words ?? ""));
    expect(lost).toEqual([]);
    expect(frames.at(-1)?.words).toContain("Thepodpaymentsapi");
    expect(frames.filter((f) => f.replaced)).toEqual([]);
    const entry = page.locator("[data-event-id]", { hasText: "Slow triage" });
    await expect.poll(() => entry.locator(".markdown table").count()).toBe(1);
    await expect.poll(() => entry.locator(".markdown ol > li").count()).toBe(3);
  }, 180_000);

  it("shows why a session failed in an error card, with the stage and agent", async () => {
    const { page } = rig;
    const broken = await submitAlert(rig.system, "PodCrashLooping", { note: "BROKEN-MODEL" });
    await waitStatus(rig.system, broken, ["failed"], 120_000);
    const failed = (await rig.system.api<SessionDetail>(`/api/v1/sessions/${broken}`)).body;
    expect(failed.error_message).toBeTruthy();
    await open(`/sessions/${broken}`);
    const card = page.getByRole("region", { name: "Investigation failed" });
    await card.waitFor();
    await expect
      .poll(() => card.getByTestId("session-error").textContent())
      .toBe(failed.error_message);
    const failures = card.getByRole("definition");
    await expect
      .poll(() => failures.allTextContents())
      .toContainEqual(expect.stringContaining("the provider rejected the API key"));
    expect(await card.getByRole("term").allTextContents()).toContain("triage › DemoInvestigator");
    await rig.shot("session-failed");
    // A completed session has no such card.
    await open(`/sessions/${sessionId}`);
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
    expect(await page.getByRole("region", { name: /^Investigation / }).count()).toBe(0);
  }, 180_000);
});
