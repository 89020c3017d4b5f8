import { resolve } from "node:path";
import type { SessionDetail, TimelineResponse } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCENARIOS_DIR, submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

/**
 * Provider fallback through the whole system (every service a process): the chain's primary
 * provider refuses its key, so the agent moves to the chain's fallback; the executive summary's
 * provider errs once and, being single-shot, moves at once. The API, the timeline and the
 * session page show where each execution ran and where it started.
 */
describe("provider fallback, end to end and on the session page", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: SCENARIOS_DIR,
      llmScriptPath: resolve(SCENARIOS_DIR, "llm-script.yaml"),
    });
  }, 240_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  it("completes on the fallback and shows the switch", async () => {
    const sys = rig.system;
    const id = await submitAlert(sys, "ProviderFallback");
    await waitStatus(sys, id, ["completed"], 60_000);

    const detail = (await sys.api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
    expect(detail.final_analysis).toBe(
      "Backup analysis: FALLBACK-MARKER, the pod is out of memory.",
    );
    expect(detail.executive_summary).toBe("Executive summary from the backup provider.");
    const [execution] = detail.stages.flatMap((s) => s.executions);
    expect(execution).toMatchObject({
      agent_name: "FallbackAgent",
      status: "completed",
      llm_provider: "scripted-backup",
      llm_backend: "scripted",
      original_llm_provider: "scripted-demo",
      original_llm_backend: "scripted",
    });

    const timeline = (await sys.api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).body;
    const fallbacks = timeline.events.filter((e) => e.event_type === "provider_fallback");
    expect(fallbacks.map((e) => [e.content, (e.metadata as { trigger?: string }).trigger])).toEqual(
      [
        ["Provider fallback: scripted-demo → scripted-backup", "immediate"],
        ["Provider fallback: scripted-demo → scripted-backup", "provider_errors"],
      ],
    );
    // The agent's event belongs to its stage; the summary's to the session.
    expect(fallbacks[0]?.stage_id).not.toBeNull();
    expect(fallbacks[1]?.stage_id).toBeNull();

    const { page } = rig;
    await page.goto(rig.url(`/sessions/${id}`));
    await page.getByRole("heading", { name: "Executive summary" }).waitFor({ timeout: 30_000 });
    const provider = page.getByRole("note", { name: "LLM provider" }).first();
    await provider.waitFor();
    expect(await provider.textContent()).toContain("scripted-backup");
    await page.getByText("fell back from scripted-demo").first().waitFor();
    const fallbackEntries = page.getByRole("article", { name: "Provider fallback" });
    const entry = fallbackEntries.first();
    await entry.waitFor();
    expect(await entry.textContent()).toContain("scripted-demo → scripted-backup");
    expect(await entry.textContent()).toContain("primary provider rejected the API key");
    // The summary's fallback is listed with the session's events, not as an agent of its own.
    const summaryFallback = fallbackEntries.nth(1);
    expect(await summaryFallback.textContent()).toContain("summary provider overloaded");
    expect(await page.getByRole("tablist", { name: "Parallel agents" }).count()).toBe(0);
    await rig.shot("provider-fallback");
  }, 120_000);
});
