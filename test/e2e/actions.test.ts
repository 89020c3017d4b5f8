/**
 * Action stages (#24), through every service with a scripted LLM and a real MCP server. An
 * action agent (`type: action`) runs the tool loop with the action safety guidelines in its
 * system prompt (the script answers it only when they are there) and ends with a YES/NO line:
 * the line leaves the stored analysis and becomes the stage's `actions_executed`. A stage of
 * action agents only is an action stage; a mixed one stays an investigation. The orchestrator
 * counts outcomes in `tarsy_action_stage_outcomes_total`. After an action stage with an
 * investigation before it, the compose stage's amended report is the session's final analysis.
 */
import { resolve } from "node:path";
import type {
  ActionAuditEntry,
  ActionList,
  LLMInteractionDetail,
  MCPInteractionDetail,
  SessionDetail,
  SessionListResponse,
  TimelineResponse,
  TraceListResponse,
} from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, scrapeProcesses, serviceTotal, total } from "./prometheus.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, EVERYTHING_ENV, ROOT } from "./support.ts";

const DIR = resolve(ROOT, "test/e2e/testdata/actions");
const METRIC = "tarsy_action_stage_outcomes_total";

let sys: E2E;

const get = async <T>(path: string): Promise<T> => {
  const r = await sys.api<T>(path);
  expect(r.status, `GET ${path}`).toBe(200);
  return r.body;
};

const completed = async (alertType: string): Promise<SessionDetail> => {
  const id = await submitAlert(sys, alertType);
  await waitStatus(sys, id, ["completed"], 60_000);
  return get<SessionDetail>(`/api/v1/sessions/${id}`);
};

interface Outcomes {
  acted: number;
  no_action: number;
  unknown: number;
  failed: number;
}

const outcomes = async (): Promise<Outcomes> => {
  const url = sys.stack.metricsUrls.orchestrator ?? sys.stack.metricsUrls["orchestrator-1"];
  if (!url) throw new Error(`no orchestrator in ${Object.keys(sys.stack.metricsUrls)}`);
  const samples = parseExposition(await (await fetch(url)).text());
  const of = (outcome: string) => total(samples, METRIC, { outcome });
  return {
    acted: of("acted"),
    no_action: of("no_action"),
    unknown: of("unknown"),
    failed: of("failed"),
  };
};

/** The executive summary's prompt: what it was given to summarize. */
const summaryPrompt = async (id: string): Promise<string> => {
  const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
  const call = trace.session_interactions.find((c) => c.interaction_type === "executive_summary");
  expect(call, "the executive summary's LLM call").toBeDefined();
  const detail = await get<LLMInteractionDetail>(`/api/v1/sessions/${id}/trace/llm/${call?.id}`);
  return detail.conversation.map((m) => m.content).join("\n");
};

beforeAll(async () => {
  sys = await bootSystem({
    configDir: DIR,
    llmScriptPath: resolve(DIR, "llm-script.yaml"),
    env: EVERYTHING_ENV,
  });
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "actions");
  await sys?.stop();
});

describe("Action stages", () => {
  it("an action agent that acts: action stage, actions_executed true, the amended report without its YES line reaches the summary", async () => {
    const before = await outcomes();
    const session = await completed("Acts");
    expect(session.stages.map((s) => [s.stage_name, s.kind, s.status, s.actions_executed])).toEqual(
      [
        ["investigate", "investigation", "completed", null],
        ["remediate", "action", "completed", true],
        ["remediate - Amended Report", "compose", "completed", null],
      ],
    );
    const action = session.stages[1];
    expect(action?.executions.map((e) => [e.agent_name, e.kind, e.status])).toEqual([
      ["Remediator", "action", "completed"],
    ]);
    // It called the tool, after saying why.
    const { events } = await get<TimelineResponse>(`/api/v1/sessions/${session.id}/timeline`);
    const own = events.filter((e) => e.stage_id === action?.id);
    const call = own.find((e) => e.event_type === "llm_tool_call");
    // The tool ran on the agent's MCP server: the pods it listed, not an error.
    expect(call?.metadata).toMatchObject({ is_error: false });
    expect(call?.content).toContain("payments-api-7f9c6d5b8-x2kqz");
    const final = own.find((e) => e.event_type === "final_analysis");
    expect(final?.content).toContain("## Actions\nRestarted payments-api-7f9c6d5b8-x2kqz.");
    expect(final?.content).not.toMatch(/YES\s*$/);
    // The action stage's stored analysis: its answer, without the marker line.
    const memo =
      "## Findings\npayments-api is OOM-killed (14 restarts).\n\n## Actions\nRestarted payments-api-7f9c6d5b8-x2kqz.";
    expect(final?.content).toBe(memo);
    expect(final?.metadata).toMatchObject({ actions_executed: true });
    // The session's: the compose stage's amended report.
    expect(session.final_analysis).toBe(
      "## Findings\npayments-api is OOM-killed (14 restarts): raise its memory limit.\n\n## Actions\nRestarted payments-api-7f9c6d5b8-x2kqz.",
    );
    const prompt = await summaryPrompt(session.id);
    expect(prompt).toContain("Restarted payments-api-7f9c6d5b8-x2kqz.");
    expect(prompt).not.toMatch(/^YES$/m);
    // The investigation's prompt has no safety guidelines; the action agent's has them.
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${session.id}/trace`);
    const firstCall = async (stageId: string | undefined) => {
      const stage = trace.stages.find((s) => s.stage_id === stageId);
      const first = stage?.executions[0]?.llm_interactions[0];
      const d = await get<LLMInteractionDetail>(
        `/api/v1/sessions/${session.id}/trace/llm/${first?.id}`,
      );
      const of = (role: string) =>
        d.conversation
          .filter((m) => m.role === role)
          .map((m) => m.content)
          .join("\n");
      return { system: of("system"), user: of("user") };
    };
    const investigation = await firstCall(session.stages[0]?.id);
    expect(investigation.system).not.toContain("Action Agent Safety Guidelines");
    expect(investigation.user).not.toContain("YES or NO");
    const actionCall = await firstCall(action?.id);
    expect(actionCall.system).toContain("Action Agent Safety Guidelines");
    expect(actionCall.system).toContain("Prefer inaction over incorrect action");
    // Its task: the investigation's findings, and the YES/NO last-line rule.
    expect(actionCall.user).toContain(
      "payments-api is OOM-killed (14 restarts): raise its memory limit.",
    );
    expect(actionCall.user).toContain("End your response with YES or NO on the very last line");
    expect(await outcomes()).toEqual({ ...before, acted: before.acted + 1 });
    // The session list says the session has an action stage.
    const list = await get<SessionListResponse>("/api/v1/sessions?alert_type=Acts");
    expect(list.sessions.map((s) => [s.id, s.has_action_stages])).toEqual([[session.id, true]]);
  });

  it("an action agent that declines: actions_executed false, counted as no_action", async () => {
    const before = await outcomes();
    const session = await completed("Declines");
    expect(session.stages.map((s) => [s.kind, s.actions_executed])).toEqual([
      ["investigation", null],
      ["action", false],
      ["compose", null],
    ]);
    // Declining is an amendment too: the compose stage folds it into the investigation's report.
    expect(session.final_analysis).toBe(
      "## Findings\npayments-api is OOM-killed (14 restarts): raise its memory limit.\n\n## Actions\nNone: a restart would not fix a memory limit that is too low.",
    );
    expect(await outcomes()).toEqual({ ...before, no_action: before.no_action + 1 });
  });

  it("no YES/NO line: actions_executed null (unknown), the text kept, counted as unknown", async () => {
    const before = await outcomes();
    const session = await completed("Silent");
    expect(session.stages[1]).toMatchObject({ kind: "action", actions_executed: null });
    const memo = (
      await get<TimelineResponse>(`/api/v1/sessions/${session.id}/timeline`)
    ).events.find((e) => e.stage_id === session.stages[1]?.id && e.event_type === "final_analysis");
    expect(memo?.content).toBe("## Actions\nRestarted payments-api, I think.");
    expect(session.final_analysis).toBe(
      "## Findings\npayments-api is OOM-killed (14 restarts): raise its memory limit.\n\n## Actions\nRestarted payments-api, I think.",
    );
    expect(await outcomes()).toEqual({ ...before, unknown: before.unknown + 1 });
    expect(sys.logs.join("\n")).toContain("did not end with a YES/NO line");
  });

  it("a mixed stage stays an investigation; its action agent still runs as one", async () => {
    const before = await outcomes();
    const session = await completed("Mixed");
    expect(session.stages.map((s) => [s.stage_name, s.kind, s.actions_executed])).toEqual([
      ["investigate-and-act", "investigation", null],
      ["investigate-and-act - Synthesis", "synthesis", null],
    ]);
    expect(session.stages[0]?.executions.map((e) => [e.agent_name, e.kind, e.status])).toEqual([
      ["Investigator", "investigation", "completed"],
      ["Remediator", "action", "completed"],
    ]);
    expect(await outcomes()).toEqual(before);
    const list = await get<SessionListResponse>("/api/v1/sessions?alert_type=Mixed");
    expect(list.sessions.map((s) => s.has_action_stages)).toEqual([false]);
  });

  it("tool classes: an investigation agent is not offered a mutating tool and its call is refused; the action agent's runs", async () => {
    const session = await completed("Steered");
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${session.id}/trace`);
    const executions = trace.stages.flatMap((s) => s.executions);
    const of = (agent: string) => {
      const execution = executions.find((e) => e.agent_name === agent);
      expect(execution, agent).toBeDefined();
      return execution ?? { llm_interactions: [], mcp_interactions: [] };
    };
    /** The tools `everything` offered the agent, as its tool_list interaction recorded them. */
    const offered = async (agent: string) => {
      const list = of(agent).mcp_interactions.find(
        (i) => i.interaction_type === "tool_list" && i.server_name === "everything",
      );
      const detail = await get<MCPInteractionDetail>(
        `/api/v1/sessions/${session.id}/trace/mcp/${list?.id}`,
      );
      return JSON.stringify(detail.available_tools);
    };
    /** What the agent's last LLM call was told each tool call returned. */
    const toolResults = async (agent: string) => {
      const last = of(agent).llm_interactions.at(-1);
      const detail = await get<LLMInteractionDetail>(
        `/api/v1/sessions/${session.id}/trace/llm/${last?.id}`,
      );
      return detail.conversation.filter((m) => m.role === "tool").map((m) => m.content);
    };

    const proberTools = await offered("Prober");
    expect(proberTools).toContain("echo");
    expect(proberTools).not.toContain("get-sum");
    expect(proberTools).not.toContain("toggle-subscriber-updates");
    const [refused, echoed] = await toolResults("Prober");
    expect(refused).toContain("not allowed to run mutating tools");
    expect(refused).not.toContain("The sum of");
    expect(echoed).toContain("still reading");

    const summerTools = await offered("Summer");
    expect(summerTools).toContain("get-sum");
    expect(summerTools).toContain("toggle-subscriber-updates");
    expect(await toolResults("Summer")).toEqual([
      expect.stringContaining("The sum of 2 and 3 is 5."),
    ]);
    expect(session.stages.map((s) => [s.stage_name, s.kind, s.actions_executed])).toEqual(
      expect.arrayContaining([["remediate", "action", true]]),
    );
    // Summer's `approval: auto`: its mutating call was approved by its config, and audited.
    const { actions } = await get<ActionList>(`/api/v1/actions?session_id=${session.id}`);
    expect(actions).toEqual([
      expect.objectContaining({
        agent_name: "Summer",
        tool_name: "everything.get-sum",
        approval_mode: "auto",
        status: "approved",
        decided_by: "policy:auto",
        call_status: "succeeded",
      }),
    ]);
    const audit = await get<{ entries: ActionAuditEntry[] }>(
      `/api/v1/actions/${actions[0]?.id}/audit`,
    );
    expect(audit.entries.map((e) => [e.event, e.actor.replace(/:.*$/, ":")])).toEqual([
      ["requested", "agent:"],
      ["approved", "policy:"],
      ["call_started", "mcp-gateway:"],
      ["call_succeeded", "mcp-gateway:"],
    ]);
    // Counted by the runner as requested and approved by the policy; nobody's decision timed.
    const scrapes = await scrapeProcesses(sys.stack.metricsUrls);
    const counted = (service: string, name: string, labels: Record<string, string>) =>
      serviceTotal(scrapes, service, name, labels);
    const requests = "tarsy_action_requests_total";
    expect(counted("agent-runner", requests, { event: "requested", mode: "auto" })).toBe(1);
    expect(counted("agent-runner", requests, { event: "approved", mode: "auto" })).toBe(1);
    expect(counted("agent-runner", requests, { mode: "required" })).toBe(0);
    expect(counted("ingest-api", "tarsy_action_decision_seconds_count", {})).toBe(0);
  });
});
