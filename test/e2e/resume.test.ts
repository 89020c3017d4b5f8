import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask, saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/resume");
const EVERYTHING_MCP = resolve(
  ROOT,
  "services/mcp-gateway/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

type Event = TimelineResponse["events"][number];

/**
 * Resuming interrupted executions end to end (every service a process, two runners): five
 * executions are caught mid-step, every runner is killed (kill -9), and new runners continue
 * each stored conversation. Finished LLM turns and tool calls are not made again; only the
 * step in flight is (a cut tool call once, a partial answer asked again), except a call to a
 * server marked `idempotent: false`, whose outcome the agent is told is unknown.
 */
describe("e2e: Resume after a runner is killed", () => {
  let sys: E2E;
  let sql: postgres.Sql;
  const ids = { steps: "", stream: "", once: "", parallel: "", chat: "" };
  let chatStageId = "";

  const get = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, `GET ${path}`).toBe(200);
    return r.body;
  };
  const finished = async (id: string): Promise<SessionDetail> => {
    await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 150_000);
    return get<SessionDetail>(`/api/v1/sessions/${id}`);
  };
  const events = async (id: string, executionId: string | undefined) =>
    (await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).events.filter(
      (e) => e.execution_id === executionId,
    );
  const traceOf = async (id: string, executionId: string | undefined) => {
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
    const execution = trace.stages
      .flatMap((s) => s.executions)
      .find((e) => e.execution_id === executionId);
    expect(execution, `the trace of ${executionId}`).toBeDefined();
    return execution ?? { llm_interactions: [], mcp_interactions: [] };
  };
  const attemptOf = async (executionId: string | undefined) =>
    (
      await sql<
        { attempt: number }[]
      >`SELECT attempt FROM agent_executions WHERE id = ${executionId ?? ""}`
    )[0]?.attempt;
  /** Streaming events of a session, as Postgres has them now. */
  const streaming = async (id: string, eventType: string) =>
    sql<{ callId: string | null }[]>`
      SELECT metadata->>'call_id' AS "callId" FROM timeline_events
      WHERE session_id = ${id} AND event_type = ${eventType}::timeline_event_type
        AND status = 'streaming'`;
  const meta = (e: Event) => (e.metadata ?? {}) as Record<string, unknown>;
  const resumedEvent = (list: Event[]) => list.filter((e) => e.event_type === "execution_resumed");
  const toolEvents = (list: Event[], callId: string) =>
    list.filter(
      (e) =>
        e.event_type === "llm_tool_call" &&
        (e.metadata as { call_id?: string } | null)?.call_id === callId,
    );

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { NODE_BIN: process.execPath, EVERYTHING_MCP },
    });
    sql = postgres(sys.database.url, { max: 2, onnotice: () => {} });

    // Five executions, each brought to the step it is caught in.
    ids.chat = await submitAlert(sys, "ResumeChat");
    await waitStatus(sys, ids.chat, ["completed"], 60_000);
    ids.steps = await submitAlert(sys, "ResumeSteps");
    ids.stream = await submitAlert(sys, "ResumeStream");
    ids.once = await submitAlert(sys, "ResumeOnce");
    ids.parallel = await submitAlert(sys, "ResumeParallel");
    chatStageId = (await ask(sys, ids.chat, "Check the operation again.")).id;
    await until(
      async () => {
        const caught = [
          (await streaming(ids.steps, "llm_tool_call")).some((e) => e.callId === "step-4"),
          (await streaming(ids.stream, "llm_response")).length === 1,
          (await streaming(ids.once, "llm_tool_call")).length === 1,
          (await streaming(ids.parallel, "llm_tool_call")).length === 2,
          (await streaming(ids.chat, "llm_tool_call")).length === 1,
        ];
        return caught.every(Boolean);
      },
      { what: "every execution caught mid-step", timeoutMs: 60_000, intervalMs: 100 },
    );
    for (const runner of sys.stack.processes.filter((p) => p.name.startsWith("agent-runner-"))) {
      await runner.kill();
    }
    await sys.stack.start("agent-runner");
    await sys.stack.start("agent-runner");
  }, 240_000);

  afterAll(async () => {
    saveLogs(sys, "resume");
    await sql?.end();
    await sys?.stop();
  }, 60_000);

  it("after 3 of 5 tool calls, mid-call: only the cut call and the rest of the loop run again", async () => {
    const done = await finished(ids.steps);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "Stepper: five steps done, the fourth run again after the interruption.",
    );
    const execution = done.stages[0]?.executions[0];
    expect(await attemptOf(execution?.id)).toBe(2);
    const trace = await traceOf(ids.steps, execution?.id);
    // Six LLM calls in all, each once: four before the kill, two after it.
    expect(trace.llm_interactions.map((i) => i.iteration)).toEqual([1, 2, 3, 4, 5, 6]);
    // Each tool call ran to its end once: the three before the kill were not made again.
    expect(trace.mcp_interactions.filter((i) => i.interaction_type === "tool_call")).toEqual(
      ["echo", "echo", "echo", "trigger-long-running-operation", "echo"].map((tool) =>
        expect.objectContaining({ tool_name: tool }),
      ),
    );
    const timeline = await events(ids.steps, execution?.id);
    // The cut call: its interrupted event, then the one the resumed attempt made.
    expect(toolEvents(timeline, "step-4").map((e) => [e.status, meta(e).resumed ?? false])).toEqual(
      [
        ["failed", false],
        ["completed", true],
      ],
    );
    for (const callId of ["step-1", "step-2", "step-3", "step-5"]) {
      expect(toolEvents(timeline, callId), callId).toHaveLength(1);
    }
    expect(resumedEvent(timeline)).toEqual([
      expect.objectContaining({
        status: "completed",
        content:
          "Resumed after an interruption: 4 LLM turns and 3 tool results kept. Runs again: everything.trigger-long-running-operation (cut off).",
        metadata: {
          mode: "resumed",
          attempt: 2,
          llm_turns: 4,
          tool_results: 3,
          pending_calls: [{ call_id: "step-4", name: "everything.trigger-long-running-operation" }],
        },
      }),
    ]);
    // The execution's tokens count every call, the interrupted attempt's included.
    const total = trace.llm_interactions.reduce((sum, i) => sum + (i.total_tokens ?? 0), 0);
    expect(total).toBeGreaterThan(0);
    expect(execution?.token_usage.total_tokens).toBe(total);
  }, 180_000);

  it("mid-stream: the partial answer is dropped and asked for again; the tool call is not repeated", async () => {
    const done = await finished(ids.stream);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("Streamer: answered again after the interruption.");
    const execution = done.stages[0]?.executions[0];
    const timeline = await events(ids.stream, execution?.id);
    expect(
      timeline
        .filter((e) => e.event_type === "llm_response" || e.event_type === "final_analysis")
        .map((e) => [e.event_type, e.status]),
    ).toEqual([
      ["llm_response", "failed"],
      ["final_analysis", "completed"],
    ]);
    expect(resumedEvent(timeline)[0]?.metadata).toMatchObject({
      mode: "resumed",
      llm_turns: 1,
      tool_results: 1,
      pending_calls: [],
    });
    const trace = await traceOf(ids.stream, execution?.id);
    expect(trace.mcp_interactions.filter((i) => i.interaction_type === "tool_call")).toHaveLength(
      1,
    );
    // The cut answer was never recorded: the tool-call turn and the answer asked again.
    expect(trace.llm_interactions.map((i) => i.interaction_type)).toEqual([
      "iteration",
      "final_analysis",
    ]);
  }, 180_000);

  it("a cut call to a server marked idempotent: false is not made again; the agent is told", async () => {
    const done = await finished(ids.once);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "OnceOnly: the operation's outcome is unknown; not repeating it.",
    );
    const execution = done.stages[0]?.executions[0];
    const timeline = await events(ids.once, execution?.id);
    expect(
      toolEvents(timeline, "once-1").map((e) => [e.status, meta(e).not_repeated ?? null]),
    ).toEqual([
      ["failed", null],
      ["completed", "not_idempotent"],
    ]);
    const trace = await traceOf(ids.once, execution?.id);
    expect(trace.mcp_interactions.filter((i) => i.interaction_type === "tool_call")).toEqual([]);
    const last = trace.llm_interactions.at(-1);
    const detail = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${ids.once}/trace/llm/${last?.id}`,
    );
    const told = detail.conversation.find((m) => m.role === "tool" && m.tool_call_id === "once-1");
    expect(told?.content).toMatch(/^Tool call outcome unknown: .*idempotent: false/);
  }, 180_000);

  it("a parallel stage: both agents resume, each running its own cut call again", async () => {
    const done = await finished(ids.parallel);
    expect(done.status).toBe("completed");
    const stage = done.stages.find((s) => s.stage_name === "investigate");
    expect(stage?.executions.map((e) => [e.agent_name, e.status])).toEqual([
      ["LeftHand", "completed"],
      ["RightHand", "completed"],
    ]);
    for (const execution of stage?.executions ?? []) {
      expect(await attemptOf(execution.id)).toBe(2);
      const timeline = await events(ids.parallel, execution.id);
      expect(resumedEvent(timeline)[0]?.metadata).toMatchObject({
        mode: "resumed",
        llm_turns: 1,
        tool_results: 0,
      });
      const trace = await traceOf(ids.parallel, execution.id);
      expect(trace.llm_interactions).toHaveLength(2);
    }
    expect(done.final_analysis).toBe("Both hands are done.");
  }, 180_000);

  it("a chat turn resumes too: its answer comes after the cut call is made again", async () => {
    await until(
      async () => {
        const d = await get<SessionDetail>(`/api/v1/sessions/${ids.chat}`);
        const stage = d.stages.find((s) => s.id === chatStageId);
        return stage && stage.status !== "active" && stage.status !== "pending" ? stage : undefined;
      },
      { what: "the chat turn's end", timeoutMs: 150_000 },
    );
    const d = await get<SessionDetail>(`/api/v1/sessions/${ids.chat}`);
    const stage = d.stages.find((s) => s.id === chatStageId);
    expect(stage?.status).toBe("completed");
    const execution = stage?.executions[0];
    const timeline = await events(ids.chat, execution?.id);
    expect(resumedEvent(timeline)[0]?.metadata).toMatchObject({
      mode: "resumed",
      llm_turns: 1,
      pending_calls: [{ call_id: "chat-1" }],
    });
    expect(toolEvents(timeline, "chat-1").map((e) => [e.status, meta(e).resumed ?? false])).toEqual(
      [
        ["failed", false],
        ["completed", true],
      ],
    );
    const trace = await traceOf(ids.chat, execution?.id);
    expect(trace.llm_interactions.map((i) => i.interaction_type)).toEqual([
      "iteration",
      "chat_response",
    ]);
  }, 180_000);
});
