import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarsy } from "../../packages/cli/test/support.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/time-budget");
const EVERYTHING_MCP = resolve(
  ROOT,
  "services/mcp-gateway/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
/** `queue.session_timeout` and `queue.wrap_up_reserve` of the scenario's tarsy.yaml. */
const SESSION_MS = 40_000;
const RESERVE_MS = 16_000;

/**
 * The time budget end to end (the Go TARSy's ADR-0029): an iterating agent stops iterating
 * when its deadline is down to the wrap-up reserve and gives a forced conclusion with
 * `reason: time_budget`, instead of being killed mid-call at the deadline. Its LLM calls and
 * tool calls are cut where the wrap-up begins; a parent waiting for sub-agents is resumed then.
 */
describe("e2e: Time budget", () => {
  let sys: E2E;
  let sql: postgres.Sql;
  const get = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, `GET ${path}`).toBe(200);
    return r.body;
  };
  const finished = async (id: string, timeoutMs: number): Promise<SessionDetail> => {
    await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, timeoutMs);
    return get<SessionDetail>(`/api/v1/sessions/${id}`);
  };
  const eventsOf = async (sessionId: string, executionId: string | undefined) =>
    (await get<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`)).events.filter(
      (e) => e.execution_id === executionId,
    );
  /** The messages of an execution's LLM calls, in order, read through the trace API. */
  const conversations = async (sessionId: string, executionId: string | undefined) => {
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`);
    const calls = trace.stages
      .flatMap((s) => s.executions)
      .filter((e) => e.execution_id === executionId)
      .flatMap((e) => e.llm_interactions);
    return Promise.all(
      calls.map(async (call) => ({
        type: call.interaction_type,
        conversation: (
          await get<LLMInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/llm/${call.id}`)
        ).conversation,
      })),
    );
  };
  const lastUser = (conversation: { role: string; content: string }[]) =>
    conversation.findLast((m) => m.role === "user")?.content ?? "";
  const startedAt = async (sessionId: string) => {
    const [row] = await sql<{ startedAt: Date }[]>`
      SELECT started_at AS "startedAt" FROM alert_sessions WHERE id = ${sessionId}`;
    return row?.startedAt.getTime() ?? Number.NaN;
  };
  const forcedFinal = (events: TimelineResponse["events"]) =>
    events.find((e) => e.event_type === "final_analysis");

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { NODE_BIN: process.execPath, EVERYTHING_MCP },
    });
    sql = postgres(sys.database.url, { max: 2, onnotice: () => {} });
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "time-budget");
    await sql?.end();
    await sys?.stop();
  }, 90_000);

  it("a model slower than the budget: its call is cut at the wrap-up and the agent concludes (time_budget); the next stage, started inside the reserve, still investigates and answers on its own", async () => {
    const id = await submitAlert(sys, "BudgetModel", { pod: "payments-api-7f9c" });
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("Follow-up: the first stage's findings stand, unverified.");
    const [first, second] = done.stages.map((s) => s.executions[0]);
    expect(first).toMatchObject({ status: "completed", forced_conclusion: "time_budget" });
    expect(second).toMatchObject({ status: "completed", forced_conclusion: null });

    // Stage 1: the 60 s call was cut where the wrap-up began (24 s in), not at the deadline.
    const start = await startedAt(id);
    const events = await eventsOf(id, first?.id);
    expect(events.map((e) => e.event_type)).toEqual(["error", "final_analysis"]);
    expect(events[0]?.metadata).toMatchObject({ kind: "iteration_timeout", iteration: 1 });
    const cutAt = Date.parse(events[0]?.created_at ?? "");
    expect(cutAt - start).toBeGreaterThanOrEqual(SESSION_MS - RESERVE_MS - 1_000);
    expect(cutAt - start).toBeLessThan(SESSION_MS - RESERVE_MS + 10_000);
    expect(forcedFinal(events)).toMatchObject({
      content: "Out of time: the pod restarts with exit code 137; the cause is not confirmed.",
      metadata: {
        forced_conclusion: true,
        reason: "time_budget",
        iterations_used: 1,
        max_iterations: 10,
      },
    });
    const calls = await conversations(id, first?.id);
    expect(calls.map((c) => c.type)).toEqual(["iteration", "forced_conclusion"]);
    expect(lastUser(calls[1]?.conversation ?? [])).toContain(
      "You are almost out of time for this investigation",
    );

    // Stage 2 started with less than the reserve (16 s) left: it was not made to conclude at
    // once but had half its time, and answered on its own; its prompt says stage 1's analysis
    // was a forced conclusion.
    const secondLeft = start + SESSION_MS - Date.parse(second?.started_at ?? "");
    expect(secondLeft).toBeLessThan(RESERVE_MS);
    const secondCalls = await conversations(id, second?.id);
    expect(secondCalls.map((c) => c.type)).toEqual(["final_analysis"]);
    const prompt = secondCalls[0]?.conversation.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("### Stage 1: investigate (forced conclusion — time budget)");
    expect(forcedFinal(await eventsOf(id, second?.id))?.metadata).toBeNull();

    // The CLI says why each agent concluded.
    const show = await tarsy(["session", "show", id], {
      env: { TARSY_API_URL: sys.stack.apiUrl },
    });
    expect(show.stderr).toBe("");
    expect(show.stdout).toMatch(
      /- SlowModel \(investigation.*\) completed \(forced conclusion: time budget\)/,
    );
    expect(show.stdout).toMatch(/- FollowUp \(investigation.*\) completed, /);
  }, 90_000);

  it("a tool slower than the budget is abandoned at the wrap-up; the agent concludes (time_budget)", async () => {
    const id = await submitAlert(sys, "BudgetTool", { pod: "payments-api-7f9c" });
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "The diagnosis did not finish in time; nothing else was found.",
    );
    const execution = done.stages[0]?.executions[0];
    expect(execution?.forced_conclusion).toBe("time_budget");
    const events = await eventsOf(id, execution?.id);
    expect(events.map((e) => e.event_type)).toEqual(["llm_tool_call", "final_analysis"]);
    expect(events[0]?.content).toContain(
      "Tool call failed: the agent's time budget ran down to its wrap-up",
    );
    expect(events[0]?.metadata).toMatchObject({ is_error: true });
    // The 40 s tool was let go 15 s into the session.
    const start = await startedAt(id);
    expect(Date.parse(events[1]?.created_at ?? "") - start).toBeLessThan(SESSION_MS - 5_000);
    expect(forcedFinal(events)?.metadata).toMatchObject({
      forced_conclusion: true,
      reason: "time_budget",
      iterations_used: 1,
    });
  }, 90_000);

  it("a parent suspended while its sub-agent works is resumed at its wrap-up, concludes, and its sub-agent (on the parent's remaining time) is cancelled", async () => {
    const id = await submitAlert(sys, "BudgetWaiter", { pod: "payments-api-7f9c" });
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "Concluding without Worker: the heap dump analysis did not come back in time.",
    );
    const [parent, worker] = done.stages[0]?.executions ?? [];
    expect(parent).toMatchObject({
      agent_name: "Waiter",
      status: "completed",
      forced_conclusion: "time_budget",
    });
    expect(worker).toMatchObject({
      agent_name: "Worker",
      parent_execution_id: parent?.id,
      status: "cancelled",
    });
    // Suspended, then resumed by its wrap-up (its sub-agent never ended on its own).
    const [row] = await sql<{ attempt: number }[]>`
      SELECT attempt FROM agent_executions WHERE id = ${parent?.id ?? ""}`;
    expect(row?.attempt).toBe(2);
    const calls = await conversations(id, parent?.id);
    expect(calls.map((c) => c.type)).toEqual(["iteration", "iteration", "forced_conclusion"]);
    // The sub-agent had the parent's remaining time: its own wrap-up cut its 60 s call at the
    // same moment (24 s in), rather than the call running on.
    const workerEvents = await eventsOf(id, worker?.id);
    const cut = workerEvents.find((e) => e.event_type === "error");
    expect(cut?.metadata).toMatchObject({ kind: "iteration_timeout", iteration: 1 });
    const start = await startedAt(id);
    expect(Date.parse(cut?.created_at ?? "") - start).toBeLessThan(
      SESSION_MS - RESERVE_MS + 10_000,
    );
  }, 90_000);

  it("a sub-agent capped by agent_timeout wraps up itself; its parent is told it was a forced conclusion", async () => {
    const id = await submitAlert(sys, "BudgetCapped", { pod: "payments-api-7f9c" });
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "From CappedWorker's partial findings: a cache grows without bound.",
    );
    const [parent, worker] = done.stages[0]?.executions ?? [];
    expect(parent).toMatchObject({ status: "completed", forced_conclusion: null });
    expect(worker).toMatchObject({
      agent_name: "CappedWorker",
      status: "completed",
      forced_conclusion: "time_budget",
    });
    const calls = await conversations(id, parent?.id);
    const delivered = calls
      .at(-1)
      ?.conversation.find((m) => m.content.startsWith("[Sub-agent completed"));
    const heading = `[Sub-agent completed — forced conclusion (time budget)] CappedWorker (${worker?.id}):`;
    const answer = "CappedWorker: partial findings, a cache grows without bound.";
    // The parent's LLM reads the answer fenced as untrusted data; the timeline shows it as is.
    expect(delivered?.content).toBe(
      `${heading}\n<untrusted_data source="sub_agent_result">\n${answer}\n</untrusted_data>`,
    );
    const result = (await eventsOf(id, parent?.id)).find(
      (e) => e.event_type === "sub_agent_result",
    );
    expect(result?.content).toBe(`${heading}\n${answer}`);
    expect(result?.metadata).toMatchObject({
      sub_agent_execution_id: worker?.id,
      forced_conclusion: "time_budget",
    });
  }, 90_000);
});
