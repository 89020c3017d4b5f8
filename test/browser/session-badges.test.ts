import { resolve } from "node:path";
import type { SessionDetail, TimelineResponse } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const PIPELINE = resolve(ROOT, "test/e2e/testdata/pipeline");

/**
 * The badges an investigation earns, on the session page in Chromium: the e2e pipeline chain
 * (its triage runs out of iterations and is forced to conclude, and one of its tool results is
 * large enough to be summarized) run through every service with its scripted LLM.
 */
describe("the session page's badges", () => {
  let rig: DashboardRig;
  let sessionId = "";
  let timeline: TimelineResponse;

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: PIPELINE,
      llmScriptPath: resolve(PIPELINE, "llm-script.yaml"),
    });
    sessionId = await submitAlert(rig.system, "PodCrashLooping", {
      namespace: "payments",
      pod: "payments-api-7f9c6d5b8-x2kqz",
    });
    await waitStatus(rig.system, sessionId, ["completed"], 120_000);
    timeline = (await rig.system.api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`))
      .body;
    await rig.page.goto(rig.url(`/sessions/${sessionId}`));
    await rig.page.getByRole("heading", { name: "Final analysis" }).waitFor({ timeout: 30_000 });
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const entry = (eventId: string) => rig.page.locator(`[data-event-id="${eventId}"]`);

  it("marks the answer an agent was forced to give when it ran out of iterations", async () => {
    const forced = timeline.events.filter(
      (e) => (e.metadata as Record<string, unknown> | undefined)?.forced_conclusion === true,
    );
    expect(forced).toHaveLength(1);
    const id = forced[0]?.id ?? "";
    await rig.page.goto(rig.url(`/sessions/${sessionId}#event-${id}`));
    // The badge names why: here the iteration limit (a wrap-up says "time budget").
    expect(forced[0]?.metadata).toMatchObject({ reason: "max_iterations" });
    await entry(id).getByText("forced conclusion · max iterations", { exact: true }).waitFor();
    await expect
      .poll(() => entry(id).locator(".markdown h2").textContent())
      .toBe("Triage (forced conclusion)");
    // Only that answer carries the badge.
    const detail = (await rig.system.api<SessionDetail>(`/api/v1/sessions/${sessionId}`)).body;
    expect(detail.status).toBe("completed");
    expect(await rig.page.getByText(/^forced conclusion/).count()).toBe(1);
    await rig.shot("session-forced-conclusion");
  });

  it("marks a tool result that was summarized, with the summary the agent read", async () => {
    const summaries = timeline.events.filter((e) => e.event_type === "mcp_tool_summary");
    expect(summaries.length).toBeGreaterThan(0);
    const id = summaries[0]?.id ?? "";
    await rig.page.goto(rig.url(`/sessions/${sessionId}#event-${id}`));
    await entry(id).getByText("summarized", { exact: true }).waitFor();
    await expect
      .poll(() => entry(id).locator(".markdown").textContent())
      .toContain("last terminated OOMKilled (exit 137)");
  });
});
