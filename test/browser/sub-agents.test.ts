import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import {
  ACTIVE_EXECUTION_STATUSES,
  type SessionDetail,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AxeViolation,
  seriousAxeViolations,
  showTheme,
  THEMES,
} from "../../packages/dashboard/testing/axe.ts";
import {
  type SessionServer,
  startSessionServer,
} from "../../services/mcp-gateway/test/servers/session-server.ts";
import { ask, submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/sub-agents");
const README_SHOTS = resolve(ROOT, "packages/dashboard/docs/screenshots");
const LOG_TASK =
  "Read the logs of pod payments-api-7f9c in namespace payments and report the error.";
const LOG_ANSWER = "LogAgent: java.lang.OutOfMemoryError (Java heap space), then exit code 137.";

/**
 * Sub-agents on the dashboard, against the whole system with the e2e sub-agent configuration
 * and its scripted LLM: an orchestrating agent is what its stage shows (no tab per sub-agent);
 * each sub-agent is a collapsible card in its parent's flow, after the dispatch_agent call that
 * started it, opening onto its own timeline; the parent's sub_agent_result reads as the
 * outcome; the trace nests sub-agents under their parent; a sub-agent dispatched while the
 * page is open appears and streams.
 */
describe("sub-agents on the session and trace pages", () => {
  let rig: DashboardRig;
  /** The configuration's MCP server keyed by session header (its sandbox agents). */
  let sandbox: SessionServer;
  const ids = { one: "", parallel: "", chat: "" };
  const detailOf = async (id: string) =>
    (await rig.system.api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
  const open = async (path: string) => {
    await rig.page.goto("about:blank");
    await rig.page.goto(rig.url(path));
  };
  const card = (name: string) =>
    rig.page.getByRole("region", { name: `Sub-agent ${name}`, exact: true });
  const toggle = (name: string) =>
    card(name).getByRole("button", { name: new RegExp(`^Sub-agent ${name}`) });
  const top = async (selector: ReturnType<DashboardRig["page"]["locator"]>) =>
    (await selector.boundingBox())?.y ?? Number.NaN;

  beforeAll(async () => {
    sandbox = await startSessionServer();
    rig = await startDashboardRig({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { SANDBOX_URL: sandbox.base },
    });
    ids.one = await submitAlert(rig.system, "SubOne", { pod: "payments-api-7f9c" });
    ids.parallel = await submitAlert(rig.system, "SubParallel", { pod: "payments-api-7f9c" });
    ids.chat = await submitAlert(rig.system, "SubChat", { pod: "payments-api-7f9c" });
    await waitStatus(rig.system, ids.one, ["completed"], 120_000);
    await waitStatus(rig.system, ids.parallel, ["completed"], 120_000);
    await waitStatus(rig.system, ids.chat, ["completed"], 120_000);
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
    await sandbox?.close();
  }, 60_000);

  it("shows the parent as the stage's agent and the sub-agent as a card after its dispatch", async () => {
    const { page } = rig;
    const detail = await detailOf(ids.one);
    const [parent, sub] = detail.stages.flatMap((s) => s.executions);
    expect(parent?.agent_name).toBe("OrchOne");
    expect(sub).toMatchObject({ agent_name: "LogAgent", parent_execution_id: parent?.id });
    await open(`/sessions/${ids.one}`);
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();

    // One agent: no tabs; the stage shows the parent (its provider line names its execution).
    expect(await page.getByRole("tablist", { name: "Parallel agents" }).count()).toBe(0);
    const provider = page.getByRole("note", { name: "LLM provider" });
    expect(await provider.count()).toBe(1);
    expect(await provider.getAttribute("data-execution-id")).toBe(parent?.id);

    // Collapsed: the agent, its task, its status, duration and tokens; not its timeline.
    const log = card("LogAgent");
    await log.waitFor();
    expect(await page.getByTestId("sub-agent").count()).toBe(1);
    expect(await log.getAttribute("data-execution-id")).toBe(sub?.id);
    expect(await log.getAttribute("data-status")).toBe("completed");
    expect(await log.getByTestId("sub-agent-task").textContent()).toBe(LOG_TASK);
    const summary = (await toggle("LogAgent").textContent()) ?? "";
    expect(summary).toContain("completed");
    expect(summary).toMatch(/\d+s/);
    expect(summary).toContain(`${sub?.token_usage.total_tokens.toLocaleString("en-US")} tokens`);
    expect(await toggle("LogAgent").getAttribute("aria-expanded")).toBe("false");
    expect(await log.locator("[data-event-id]").count()).toBe(0);

    // In the parent's flow: after its dispatch_agent call, before the result it received.
    const dispatch = page.getByRole("button", { name: "Tool call dispatch_agent" });
    const result = page.locator('article[data-event-type="sub_agent_result"]');
    expect(await top(log)).toBeGreaterThan(await top(dispatch));
    expect(await top(result)).toBeGreaterThan(await top(log));

    // The parent's sub_agent_result: the agent, how it ended, and its answer.
    expect(await result.count()).toBe(1);
    expect(await result.getByText("LogAgent", { exact: true }).count()).toBe(1);
    expect(await result.getByText("completed", { exact: true }).count()).toBe(1);
    expect(await result.locator(".markdown").textContent()).toContain(LOG_ANSWER);
    expect(await result.textContent()).not.toContain("[Sub-agent completed]");

    // Expanded: the sub-agent's own timeline, rendered as any agent's.
    await toggle("LogAgent").click();
    expect(await toggle("LogAgent").getAttribute("aria-expanded")).toBe("true");
    const items = log.getByRole("list", { name: "LogAgent timeline" });
    await items.waitFor();
    const types = await items
      .locator("[data-event-id]")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-event-type")));
    expect(types).toEqual(["task_assigned", "llm_tool_call", "final_analysis"]);
    expect(await items.locator('[data-event-type="task_assigned"]').textContent()).toContain(
      LOG_TASK,
    );
    await items.getByRole("button", { name: "Tool call demo-cluster.get_pod_logs" }).click();
    await items.getByRole("region", { name: "result of demo-cluster.get_pod_logs" }).waitFor();
    expect(
      await items
        .getByRole("region", { name: "result of demo-cluster.get_pod_logs" })
        .textContent(),
    ).toContain("java.lang.OutOfMemoryError");
    expect(await items.locator('[data-event-type="final_analysis"]').textContent()).toContain(
      LOG_ANSWER,
    );
    await mkdir(README_SHOTS, { recursive: true });
    await rig.shot("session-sub-agents");
    await page.screenshot({
      path: resolve(README_SHOTS, "session-sub-agents.png"),
      fullPage: true,
    });
  }, 90_000);

  it("in the chat panel too: a sub-agent the chat agent dispatched is a card after its dispatch, not loose items of the answer", async () => {
    const { page } = rig;
    const turn = await ask(rig.system, ids.chat, "Is the heap close to its limit?");
    await until(
      async () => {
        const stage = (await detailOf(ids.chat)).stages.find((s) => s.id === turn.id);
        return stage && !ACTIVE_EXECUTION_STATUSES.includes(stage.status) ? stage : undefined;
      },
      { what: "the chat turn to end", timeoutMs: 60_000 },
    );
    const stage = (await detailOf(ids.chat)).stages.find((s) => s.id === turn.id);
    const [chat, sub] = stage?.executions ?? [];
    expect(sub).toMatchObject({ agent_name: "MetricAgent", parent_execution_id: chat?.id });
    await open(`/sessions/${ids.chat}`);
    const messages = page.getByRole("list", { name: "Chat messages" });
    await messages.waitFor();
    const answer = messages.getByRole("list", { name: "Answer" });
    const metric = answer.getByRole("region", { name: "Sub-agent MetricAgent", exact: true });
    await metric.waitFor();
    expect(await metric.getAttribute("data-execution-id")).toBe(sub?.id);
    // Collapsed: none of the sub-agent's events is in the answer's list.
    const loose = await answer
      .locator(":scope > li > article[data-event-id]")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-event-id")));
    const timeline = (
      await rig.system.api<TimelineResponse>(`/api/v1/sessions/${ids.chat}/timeline`)
    ).body;
    const subEvents = timeline.events.filter((e) => e.execution_id === sub?.id).map((e) => e.id);
    expect(subEvents.length).toBeGreaterThan(0);
    expect(loose.filter((id) => subEvents.includes(id ?? ""))).toEqual([]);
    // After the chat agent's dispatch_agent call, before the result it received.
    const dispatch = answer.getByRole("button", { name: "Tool call dispatch_agent" });
    const result = answer.locator('article[data-event-type="sub_agent_result"]');
    expect(await top(metric)).toBeGreaterThan(await top(dispatch));
    expect(await top(result)).toBeGreaterThan(await top(metric));
    // Opened: its own timeline.
    await metric.getByRole("button", { name: /^Sub-agent MetricAgent/ }).click();
    const items = metric.getByRole("list", { name: "MetricAgent timeline" });
    await items.waitFor();
    expect(await items.locator('[data-event-type="final_analysis"]').textContent()).toContain(
      "MetricAgent: 1890Mi of 2048Mi is 92% of the limit.",
    );
  }, 120_000);

  it("shows parallel sub-agents as cards under their one parent, never as tabs", async () => {
    const { page } = rig;
    const detail = await detailOf(ids.parallel);
    const [parent, ...subs] = detail.stages.flatMap((s) => s.executions);
    expect(subs).toHaveLength(2);
    await open(`/sessions/${ids.parallel}`);
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
    expect(await page.getByRole("tablist", { name: "Parallel agents" }).count()).toBe(0);
    expect(
      await page.getByRole("note", { name: "LLM provider" }).getAttribute("data-execution-id"),
    ).toBe(parent?.id);
    await card("MetricAgent").waitFor();
    const cards = page.getByTestId("sub-agent");
    expect(
      await cards.evaluateAll((els) =>
        els.map((el) => [el.getAttribute("aria-label"), el.getAttribute("data-status")]),
      ),
    ).toEqual(subs.map((s) => [`Sub-agent ${s.agent_name}`, "completed"]));
    expect(await card("MetricAgent").getByTestId("sub-agent-task").textContent()).toBe(
      "Heap 1890Mi of 2048Mi: is that close to the limit?",
    );
    // Each after the parent's dispatch_agent calls (both in one LLM turn), before list_agents.
    const dispatches = page.getByRole("button", { name: "Tool call dispatch_agent" });
    expect(await dispatches.count()).toBe(2);
    const list = page.getByRole("button", { name: "Tool call list_agents" });
    for (const name of ["LogAgent", "MetricAgent"]) {
      expect(await top(card(name))).toBeGreaterThan(await top(dispatches.first()));
      expect(await top(card(name))).toBeLessThan(await top(list));
    }
    expect(
      await page
        .locator('article[data-event-type="sub_agent_result"]')
        .evaluateAll((els) => els.length),
    ).toBe(2);
  }, 60_000);

  it("nests the sub-agents under their parent in the trace, counted with it", async () => {
    const { page } = rig;
    const trace = (await rig.system.api<TraceListResponse>(`/api/v1/sessions/${ids.one}/trace`))
      .body;
    const executions = trace.stages.flatMap((s) => s.executions);
    const count = (e: (typeof executions)[number] | undefined) =>
      (e?.llm_interactions.length ?? 0) + (e?.mcp_interactions.length ?? 0);
    const parent = executions.find((e) => e.agent_name === "OrchOne");
    const sub = executions.find((e) => e.agent_name === "LogAgent");
    expect(sub?.parent_execution_id).toBe(parent?.execution_id);
    await open(`/sessions/${ids.one}/trace`);
    const orch = page.getByRole("region", { name: "Agent OrchOne", exact: true });
    await orch.waitFor();
    // LogAgent is no agent of the stage: only inside its parent's "Sub-agents" section.
    expect(await page.getByRole("region", { name: "Agent LogAgent", exact: true }).count()).toBe(0);
    const nested = orch
      .getByRole("region", { name: "Sub-agents of OrchOne" })
      .getByRole("region", { name: "Sub-agent LogAgent", exact: true });
    await nested.waitFor();
    expect(await nested.getAttribute("data-execution-id")).toBe(sub?.execution_id);
    expect(await orch.getByText(`${count(parent) + count(sub)} interactions`).count()).toBe(1);
    expect(await orch.getByText("1 sub-agent", { exact: true }).count()).toBe(1);
    expect(await nested.getByText(`${count(sub)} interactions`).count()).toBe(1);
    await nested
      .getByRole("button", { name: /^MCP tool_call demo-cluster\.get_pod_logs/ })
      .waitFor();
    await nested.getByRole("button", { name: /^LLM / }).first().click();
    await nested.getByRole("list", { name: "Conversation" }).waitFor();
    expect(await nested.getByRole("list", { name: "Conversation" }).textContent()).toContain(
      `## Task\n\n${LOG_TASK}`,
    );
  }, 60_000);

  it("shows a sub-agent dispatched while the page is open, and streams it", async () => {
    const { page } = rig;
    // PatientAgent answers after 6 s: the page is open while it works.
    const id = await submitAlert(rig.system, "SubKill", { pod: "payments-api-7f9c" });
    await open(`/sessions/${id}`);
    const patient = card("PatientAgent");
    await patient.waitFor({ timeout: 60_000 });
    const running = await until(
      async () => {
        const status = await patient.getAttribute("data-status");
        return status ? status : null;
      },
      { what: "the sub-agent card's status" },
    );
    // Caught while it works: open it and watch its timeline arrive without a reload.
    expect(ACTIVE_EXECUTION_STATUSES).toContain(running);
    await toggle("PatientAgent").click();
    const items = patient.getByRole("list", { name: "PatientAgent timeline" });
    await items.locator('[data-event-type="task_assigned"]').waitFor();
    expect(await items.locator('[data-event-type="task_assigned"]').textContent()).toContain(
      "Compare the last three deployments.",
    );
    await items
      .locator('[data-event-type="final_analysis"]')
      .getByText("PatientAgent: deployment 3 doubled the batch size.")
      .waitFor({ timeout: 60_000 });
    await until(async () => (await patient.getAttribute("data-status")) === "completed", {
      what: "the sub-agent card to show completed",
      timeoutMs: 30_000,
    });
    await page
      .locator('article[data-event-type="sub_agent_result"]')
      .getByText("PatientAgent", { exact: true })
      .waitFor({ timeout: 30_000 });
    await page.getByRole("heading", { name: "Final analysis" }).waitFor({ timeout: 60_000 });
    expect(await page.getByRole("tablist", { name: "Parallel agents" }).count()).toBe(0);
    // The card holds the sub-agent's timeline as REST reports it, each item once.
    const timeline = (await rig.system.api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`))
      .body;
    const subId = await patient.getAttribute("data-execution-id");
    const shown = await items
      .locator("[data-event-id]")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-event-id")));
    expect(shown).toEqual(timeline.events.filter((e) => e.execution_id === subId).map((e) => e.id));
    expect(shown.length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, AxeViolation[]> = {};
    const audit = async (where: string) => {
      const violations = await seriousAxeViolations(page);
      if (violations.length) found[where] = violations;
    };
    for (const theme of THEMES) {
      await open(`/sessions/${ids.one}`);
      await page.getByRole("heading", { name: "Final analysis" }).waitFor();
      await showTheme(page, theme);
      await toggle("LogAgent").click();
      await card("LogAgent")
        .getByRole("button", { name: "Tool call demo-cluster.get_pod_logs" })
        .click();
      await card("LogAgent")
        .getByRole("region", { name: "result of demo-cluster.get_pod_logs" })
        .waitFor();
      await audit(`${theme} session`);
      await open(`/sessions/${ids.parallel}`);
      await card("MetricAgent").waitFor();
      await audit(`${theme} session (parallel sub-agents)`);
      await open(`/sessions/${ids.one}/trace`);
      await page.getByRole("region", { name: "Sub-agent LogAgent" }).waitFor();
      await audit(`${theme} trace`);
    }
    expect(found).toEqual({});
  }, 180_000);
});
