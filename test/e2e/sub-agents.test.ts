import { resolve } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  ACTIVE_EXECUTION_STATUSES,
  ExecutionRequestedSchema,
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_EXECUTION_STATUSES,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
  WORK_SUBJECTS,
} from "@tarsy/contracts";
import { connectClient, natsUrl, type TestClient, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SessionServer,
  startSessionServer,
} from "../../services/mcp-gateway/test/servers/session-server.ts";
import { goldenJson, goldenSession } from "./golden.ts";
import { ask, chatStage, saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/sub-agents");
const GOLDEN = resolve(ROOT, "test/e2e/golden/sub-agents");

/**
 * Sub-agents end to end: every service a process (two runners), orchestrating agents that
 * dispatch, list and cancel sub-agents through the scripted LLM. A sub-agent is its own
 * execution in its parent's stage, run by any runner; a parent with nothing to do but wait is
 * suspended (no runner holds it) and resumed by the orchestrator when a sub-agent ends.
 */
describe("e2e: Sub-agents", () => {
  let sys: E2E;
  let sql: postgres.Sql;
  let sandbox: SessionServer;
  let ws: TestClient;
  /** The one-dispatch scenario's session, watched on the WebSocket from its start. */
  let oneDispatch = "";
  const get = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, `GET ${path}`).toBe(200);
    return r.body;
  };
  const executionsOf = (d: SessionDetail) => d.stages.flatMap((s) => s.executions);
  /** The session once it ended, as the detail API shows it. */
  const finished = async (id: string, timeoutMs: number): Promise<SessionDetail> => {
    await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, timeoutMs);
    return get<SessionDetail>(`/api/v1/sessions/${id}`);
  };
  const attemptOf = async (executionId: string) =>
    (
      await sql<
        { attempt: number }[]
      >`SELECT attempt FROM agent_executions WHERE id = ${executionId}`
    )[0]?.attempt;
  /** The conversation of an execution's last LLM call, read through the trace API. */
  const lastConversation = async (sessionId: string, executionId: string) => {
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`);
    const calls = trace.stages
      .flatMap((s) => s.executions)
      .filter((e) => e.execution_id === executionId)
      .flatMap((e) => e.llm_interactions);
    const last = calls.at(-1);
    expect(last, `an LLM call of ${executionId}`).toBeDefined();
    const detail = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${sessionId}/trace/llm/${last?.id}`,
    );
    return { calls, conversation: detail.conversation };
  };

  beforeAll(async () => {
    sandbox = await startSessionServer();
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { SANDBOX_URL: sandbox.base },
    });
    sql = postgres(sys.database.url, { max: 2, onnotice: () => {} });
    ws = await connectClient(sys.stack.wsUrl);
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "sub-agents");
    await ws?.close();
    await sql?.end();
    await sys?.stop();
    await sandbox?.close();
  }, 90_000);

  it("one dispatch: the sub-agent runs its task with its own tools, the parent waits suspended and concludes from its result", async () => {
    // Watched on the WebSocket from the start: the list channel, then the session's.
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed" && f.channel === "sessions");
    const id = await submitAlert(sys, "SubOne", { pod: "payments-api-7f9c" });
    ws.send({ action: "subscribe", channel: `session:${id}` });
    oneDispatch = id;
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe(
      "Root cause (from LogAgent): payments-api ran out of Java heap and exited with code 137.",
    );

    // The stage has the parent and, nested under it, the sub-agent with its task.
    const [parent, sub, ...rest] = executionsOf(done);
    expect(rest).toEqual([]);
    expect(parent).toMatchObject({
      agent_name: "OrchOne",
      status: "completed",
      parent_execution_id: null,
      task: null,
    });
    expect(sub).toMatchObject({
      agent_name: "LogAgent",
      status: "completed",
      parent_execution_id: parent?.id,
      task: "Read the logs of pod payments-api-7f9c in namespace payments and report the error.",
    });
    expect(done.stages.map((s) => [s.stage_name, s.status])).toEqual([
      ["investigate", "completed"],
    ]);

    // The parent gave up its runner while it waited: a second attempt resumed it.
    expect(await attemptOf(parent?.id ?? "")).toBe(2);
    expect(
      sys.logs.some(
        (l) =>
          l.includes("execution suspended until a sub-agent ends") && l.includes(parent?.id ?? "?"),
      ),
    ).toBe(true);

    // The sub-agent: a task_assigned event, its tool call, its answer.
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    const subEvents = timeline.events.filter((e) => e.execution_id === sub?.id);
    expect(subEvents[0]).toMatchObject({
      event_type: "task_assigned",
      content: sub?.task,
      metadata: { parent_execution_id: parent?.id },
    });
    expect(subEvents.map((e) => e.event_type)).toEqual([
      "task_assigned",
      "llm_tool_call",
      "final_analysis",
    ]);
    expect(subEvents[1]?.content).toContain("java.lang.OutOfMemoryError");

    // The sub-agent's prompt: the task only, with the sub-agent rules; no orchestration tools.
    const subCall = await lastConversation(id, sub?.id ?? "");
    expect(subCall.conversation.find((m) => m.role === "user")?.content).toBe(
      `## Task\n\n${sub?.task}`,
    );
    expect(subCall.conversation.find((m) => m.role === "system")?.content).toContain(
      "You are a sub-agent dispatched by an orchestrator for a specific task.",
    );
    expect(subCall.conversation.find((m) => m.role === "system")?.content).not.toContain(
      "Available Sub-Agents",
    );

    // The parent: the catalog in its prompt, the dispatch answered at once, the result as a
    // user message, recorded on its timeline.
    const parentCall = await lastConversation(id, parent?.id ?? "");
    const system = parentCall.conversation.find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain("## Available Sub-Agents");
    expect(system).toContain(
      "- **LogAgent**: Reads pod logs of the demo cluster\n  MCP tools: demo-cluster",
    );
    expect(system).toContain(
      "- **MetricAgent**: Reasons about resource figures it is given; no tools\n  Tools: none (pure reasoning)",
    );
    const dispatched = parentCall.conversation.find((m) => m.role === "tool");
    expect(JSON.parse(dispatched?.content ?? "{}")).toMatchObject({
      execution_id: sub?.id,
      status: "accepted",
    });
    const answer = "LogAgent: java.lang.OutOfMemoryError (Java heap space), then exit code 137.";
    const result = `[Sub-agent completed] LogAgent (${sub?.id}):\n${answer}`;
    // The parent's LLM reads the answer fenced as untrusted data; the timeline shows it as is.
    expect(
      parentCall.conversation.filter((m) => m.role === "user").map((m) => m.content),
    ).toContain(
      `[Sub-agent completed] LogAgent (${sub?.id}):\n<untrusted_data source="sub_agent_result">\n${answer}\n</untrusted_data>`,
    );
    const parentEvents = timeline.events.filter((e) => e.execution_id === parent?.id);
    expect(parentEvents.filter((e) => e.event_type === "sub_agent_result")).toEqual([
      expect.objectContaining({
        content: result,
        metadata: { sub_agent_execution_id: sub?.id, agent_name: "LogAgent", status: "completed" },
      }),
    ]);
    // Three LLM calls: dispatch, "waiting" (then suspended), the conclusion after the result.
    expect(parentCall.calls.map((c) => c.interaction_type)).toEqual([
      "iteration",
      "iteration",
      "final_analysis",
    ]);
    // The trace links the sub-agent to its parent.
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
    expect(
      trace.stages.flatMap((st) => st.executions).map((e) => [e.agent_name, e.parent_execution_id]),
    ).toEqual([
      ["OrchOne", null],
      ["LogAgent", parent?.id],
    ]);
  }, 120_000);

  it("one dispatch, as the WebSocket and the API show it: every event of the session carries its id, in the order the work happened, and the golden files of all four data layers", async () => {
    const id = oneDispatch;
    expect(id, "the one-dispatch session").not.toBe("");
    const channel = `session:${id}`;
    // Every completed event the API shows has reached the WebSocket (completed, or created as
    // completed), and the session's end.
    const { events } = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    await until(
      () => {
        const ended = new Set(
          ws.frames.flatMap((f) =>
            "id" in f &&
            f.channel === channel &&
            (f.payload.type === "timeline_event.completed" ||
              (f.payload.type === "timeline_event.created" && f.payload.status === "completed"))
              ? [f.payload.event_id]
              : [],
          ),
        );
        const over = ws.frames.some(
          (f) =>
            "id" in f &&
            f.channel === channel &&
            f.payload.type === "session.status" &&
            f.payload.status === "completed",
        );
        return over && events.every((e) => e.status !== "completed" || ended.has(e.id));
      },
      { what: "the WebSocket to show every completed event", timeoutMs: 15_000 },
    );
    const session = ws.frames.flatMap((f) =>
      "id" in f && f.channel === channel ? [f.payload] : [],
    );
    expect(session.every((p) => p.session_id === id)).toBe(true);

    // The key events in the order the work happened (others in between).
    const { stages } = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    const [parent, sub] = stages[0]?.executions ?? [];
    const key = session.flatMap((p) => {
      if (p.type === "session.status") return [`session ${p.status}`];
      if (p.type === "stage.status") return [`stage ${p.stage_name} ${p.status}`];
      if (p.type !== "timeline_event.created" && p.type !== "timeline_event.completed") return [];
      const who =
        p.execution_id === parent?.id ? "parent" : p.execution_id === sub?.id ? "sub" : "session";
      return [
        `${who} ${p.event_type} ${p.type === "timeline_event.created" ? "created" : "completed"}`,
      ];
    });
    const expected = [
      "session in_progress",
      "stage investigate started",
      "parent llm_tool_call created",
      "sub task_assigned created",
      "sub llm_tool_call completed",
      "sub final_analysis completed",
      "parent sub_agent_result created",
      "parent final_analysis completed",
      "stage investigate completed",
      "session executive_summary completed",
      "session completed",
    ];
    let at = -1;
    for (const step of expected) {
      const next = key.indexOf(step, at + 1);
      expect(
        next,
        `"${step}" after "${key[at] ?? "the start"}" in:\n${key.join("\n")}`,
      ).toBeGreaterThan(at);
      at = next;
    }

    const files = await goldenSession(sys.api, id, ws.frames, { [ROOT]: "<repo>" });
    for (const [name, content] of Object.entries(files)) {
      await expect(goldenJson(content), name).toMatchFileSnapshot(
        resolve(GOLDEN, "one-dispatch", name),
      );
    }
  }, 60_000);

  it("several in parallel (catalog from the chain), list_agents, and a parent woken once per result", async () => {
    const id = await submitAlert(sys, "SubParallel", { pod: "payments-api-7f9c" });
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    const [parent, ...subs] = executionsOf(done);
    expect(subs.map((s) => [s.agent_name, s.status, s.parent_execution_id]).sort()).toEqual([
      ["LogAgent", "completed", parent?.id],
      ["MetricAgent", "completed", parent?.id],
    ]);
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    const tools = conversation.filter((m) => m.role === "tool");
    const listed = JSON.parse(
      tools.find((m) => m.tool_name === "list_agents")?.content ?? "[]",
    ) as {
      execution_id: string;
      name: string;
      task: string;
      status: string;
    }[];
    expect(listed.map((a) => [a.name, a.execution_id]).sort()).toEqual(
      subs.map((s) => [s.agent_name, s.id]).sort(),
    );
    // Listed right after dispatch: each is waiting, running or (a fast one) done.
    const live = [...ACTIVE_EXECUTION_STATUSES, "completed"];
    expect(listed.every((a) => live.includes(a.status as (typeof live)[number]))).toBe(true);
    const results = conversation.filter(
      (m) => m.role === "user" && m.content.startsWith("[Sub-agent completed]"),
    );
    expect(results.map((m) => m.content.split(" (")[0]).sort()).toEqual([
      "[Sub-agent completed] LogAgent",
      "[Sub-agent completed] MetricAgent",
    ]);
    expect(done.final_analysis).toBe(
      "Both sub-agents reported: the heap is at 92% of its limit and the pod died of OutOfMemoryError.",
    );
    // Each result delivered exactly once.
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    expect(timeline.events.filter((e) => e.event_type === "sub_agent_result")).toHaveLength(2);
  }, 120_000);

  it("a sub-agent that fails is reported to its parent, which completes; the stage does not fail", async () => {
    const id = await submitAlert(sys, "SubFail");
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    const [parent, sub] = executionsOf(done);
    expect(sub).toMatchObject({
      agent_name: "BrokenAgent",
      status: "failed",
      parent_execution_id: parent?.id,
    });
    expect(sub?.error_message).toContain("the model refused the request");
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    const report = conversation.find(
      (m) => m.role === "user" && m.content.startsWith("[Sub-agent failed]"),
    );
    expect(report?.content).toContain(`[Sub-agent failed] BrokenAgent (${sub?.id}):`);
    expect(report?.content).toContain("the model refused the request");
    expect(done.stages.map((s) => s.status)).toEqual(["completed"]);
    expect(done.final_analysis).toBe("BrokenAgent failed; concluding from the alert alone.");
  }, 120_000);

  it("cancel_agent ends a running sub-agent with the parent's reason; the parent goes on without waiting", async () => {
    const id = await submitAlert(sys, "SubCancel");
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    const [parent, sub] = executionsOf(done);
    expect(sub).toMatchObject({
      agent_name: "SlowAgent",
      status: "cancelled",
      error_message: "Cancelled by OrchCancel: no longer needed",
    });
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    const cancelled = conversation.find((m) => m.role === "tool" && m.tool_name === "cancel_agent");
    expect(JSON.parse(cancelled?.content ?? "{}")).toEqual({
      execution_id: sub?.id,
      status: "cancelled",
    });
    expect(done.final_analysis).toBe("Cancelled SlowAgent: its analysis was no longer needed.");
    // Its runner stopped it: nothing of it is left streaming.
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    await until(
      async () => {
        const t = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
        return t.events
          .filter((e) => e.execution_id === sub?.id)
          .every((e) => e.status !== "streaming");
      },
      { what: "the cancelled sub-agent's events to end", timeoutMs: 15_000 },
    );
    expect(timeline.events.filter((e) => e.event_type === "sub_agent_result")).toEqual([]);
  }, 120_000);

  it("limits: a dispatch over max_concurrent_agents is refused, and agent_timeout times a sub-agent out", async () => {
    const id = await submitAlert(sys, "SubLimited");
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    const [parent, sub, ...rest] = executionsOf(done);
    expect(rest).toEqual([]);
    expect(sub).toMatchObject({ agent_name: "SlowAgent", status: "timed_out" });
    expect(sub?.error_message).toBe("sub-agent timed out after 2s (orchestrator.agent_timeout)");
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    const refused = conversation.filter((m) => m.role === "tool")[1];
    expect(refused?.content).toBe(
      "Not dispatched: 1 sub-agents are already running (max_concurrent_agents 1). Wait for a result or cancel one first.",
    );
    expect(
      conversation.some(
        (m) =>
          m.role === "user" &&
          m.content.startsWith(`[Sub-agent timed out] SlowAgent (${sub?.id}):`),
      ),
    ).toBe(true);
  }, 120_000);

  it("max_budget: a sub-agent is stopped when the sub-agents' total budget is spent, and a dispatch after that is refused", async () => {
    const id = await submitAlert(sys, "SubBudget");
    const done = await finished(id, 60_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("The sub-agents' budget ran out; concluding from the alert.");
    const [parent, sub, ...rest] = executionsOf(done);
    // MetricAgent was never dispatched.
    expect(rest).toEqual([]);
    const budget = "the sub-agents' total budget of 3s is spent (orchestrator.max_budget)";
    expect(sub).toMatchObject({
      agent_name: "SlowAgent",
      status: "timed_out",
      error_message: budget,
    });
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    expect(
      conversation.some(
        (m) =>
          m.role === "user" &&
          m.content.startsWith(`[Sub-agent timed out] SlowAgent (${sub?.id}):\n${budget}`),
      ),
    ).toBe(true);
    const refused = conversation.filter((m) => m.role === "tool").at(-1);
    expect(refused?.content).toBe(`Not dispatched: ${budget}.`);
  }, 120_000);

  it("several phases: after the first result the parent dispatches two more, and concludes once all three reported", async () => {
    const id = await submitAlert(sys, "SubPhases");
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("All three steps are done.");
    const [parent, ...subs] = executionsOf(done);
    expect(subs.map((s) => [s.agent_name, s.task, s.status, s.parent_execution_id])).toEqual([
      ["StepAgent", "Step 1: list the pods.", "completed", parent?.id],
      ["StepAgent", "Step 2: read the logs.", "completed", parent?.id],
      ["StepAgent", "Step 3: check the limits.", "completed", parent?.id],
    ]);
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    expect(
      conversation.filter((m) => m.role === "tool" && m.tool_name === "dispatch_agent"),
    ).toHaveLength(3);
    // Step 1's result came before the second phase's dispatches.
    const order = conversation.map((m) =>
      m.role === "tool"
        ? `tool:${JSON.parse(m.content).execution_id}`
        : m.role === "user"
          ? m.content.split(":")[0]
          : m.role,
    );
    expect(order.indexOf(`[Sub-agent completed] StepAgent (${subs[0]?.id})`)).toBeLessThan(
      order.indexOf(`tool:${subs[1]?.id}`),
    );
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    expect(timeline.events.filter((e) => e.event_type === "sub_agent_result")).toHaveLength(3);
  }, 120_000);

  it("a sub-agent gets its own skills: the catalog in its prompt and load_skill, its load in its timeline", async () => {
    const id = await submitAlert(sys, "SubSkills");
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    const [parent, sub] = executionsOf(done);
    expect(sub).toMatchObject({
      agent_name: "SkilledWorker",
      status: "completed",
      parent_execution_id: parent?.id,
    });
    const { conversation } = await lastConversation(id, sub?.id ?? "");
    expect(conversation.find((m) => m.role === "system")?.content).toContain(
      "- **heap-check**: How to tell a JVM heap exhaustion from a container memory limit",
    );
    const loaded = conversation.find((m) => m.role === "tool" && m.tool_name === "load_skill");
    expect(loaded?.content).toContain("## Skill: heap-check");
    expect(loaded?.content).toContain("HEAP-STEP: compare the JVM heap");
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    expect(
      timeline.events
        .filter((e) => e.execution_id === sub?.id && e.event_type === "skill_loaded")
        .map((e) => [e.content, e.metadata]),
    ).toEqual([["heap-check", { skill: "heap-check", source: "load_skill" }]]);
    // The orchestrator's own catalog (every skill: its allowlist is unset) is its own.
    expect(
      timeline.events.filter(
        (e) => e.execution_id === parent?.id && e.event_type === "skill_loaded",
      ),
    ).toEqual([]);
  }, 120_000);

  it("chat dispatches too (chat.sub_agents): the answer waits for the sub-agent, which runs in the chat turn's stage", async () => {
    const id = await submitAlert(sys, "SubChat");
    expect((await finished(id, 60_000)).status).toBe("completed");
    const turn = await ask(sys, id, "Is the heap close to its limit?");
    await until(
      async () =>
        TERMINAL_EXECUTION_STATUSES.includes((await chatStage(sys, id, turn.id)).status) || null,
      {
        what: "the chat turn to end",
        timeoutMs: 60_000,
      },
    );
    const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    const stage = detail.stages.find((s) => s.id === turn.id);
    expect(stage?.status).toBe("completed");
    const [chat, sub, ...rest] = stage?.executions ?? [];
    expect(rest).toEqual([]);
    expect(chat).toMatchObject({
      kind: "chat",
      agent_name: "ChatAgent",
      status: "completed",
      parent_execution_id: null,
    });
    expect(sub).toMatchObject({
      agent_name: "MetricAgent",
      status: "completed",
      parent_execution_id: chat?.id,
      task: "Is 1890Mi of 2048Mi close to the limit?",
    });
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    const final = timeline.events.find(
      (e) => e.execution_id === chat?.id && e.event_type === "final_analysis",
    );
    expect(final?.content).toBe("CHAT: MetricAgent says the heap is at 92% of its limit.");
  }, 120_000);

  it("a session cancel while the parent waits ends the parent and both its sub-agents, the stage and the session; every event carries the session id, in order", async () => {
    const id = await submitAlert(sys, "SubWait");
    ws.send({ action: "subscribe", channel: `session:${id}` });
    const suspended = await until(
      async () => {
        const [row] = await sql<{ id: string }[]>`
          SELECT id FROM agent_executions
          WHERE session_id = ${id} AND agent_name = 'OrchWait' AND suspended_at IS NOT NULL`;
        return row;
      },
      { what: "the parent to wait suspended", timeoutMs: 60_000 },
    );
    const slow = await until(
      async () => {
        const rows = await sql<{ id: string }[]>`
          SELECT id FROM agent_executions
          WHERE session_id = ${id} AND agent_name = 'SlowAgent' AND status = 'active'`;
        return rows.length === 2 ? rows : undefined;
      },
      { what: "both SlowAgents to run", timeoutMs: 30_000 },
    );
    const cancel = await sys.api(`/api/v1/sessions/${id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(202);
    const done = await finished(id, 30_000);
    expect(done.status).toBe("cancelled");
    expect(done.stages.map((s) => s.status)).toEqual(["cancelled"]);
    const byId = new Map(executionsOf(done).map((e) => [e.id, e]));
    expect(byId.size).toBe(3);
    expect(byId.get(suspended.id)?.status).toBe("cancelled");
    for (const sub of slow) expect(byId.get(sub.id)?.status).toBe("cancelled");
    // The runners running the SlowAgents were told: their LLM calls ended, nothing is left
    // streaming.
    await until(
      async () => {
        const t = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
        return t.events.every((e) => e.status !== "streaming");
      },
      { what: "every event to end", timeoutMs: 15_000 },
    );

    // On the WebSocket: every event of the session's channel names it, in the order of the work.
    const channel = `session:${id}`;
    const onChannel = () =>
      ws.frames.flatMap((f) => ("id" in f && f.channel === channel ? [f.payload] : []));
    await until(
      () =>
        onChannel().some((p) => p.type === "session.status" && p.status === "cancelled")
          ? true
          : undefined,
      { what: "the WebSocket to show the session cancelled", timeoutMs: 15_000 },
    );
    const events = onChannel();
    expect(events.every((p) => p.session_id === id)).toBe(true);
    const key = events.flatMap((p) => {
      if (p.type === "session.status") return [`session ${p.status}`];
      if (p.type === "stage.status") return [`stage ${p.status}`];
      if (p.type === "timeline_event.created" && p.event_type === "task_assigned") {
        return ["task_assigned"];
      }
      return [];
    });
    const at = (step: string, from = 0) => key.indexOf(step, from);
    expect(
      key.filter((k) => k === "task_assigned"),
      key.join(", "),
    ).toHaveLength(2);
    expect(at("session in_progress"), key.join(", ")).toBeGreaterThanOrEqual(0);
    expect(at("stage started")).toBeGreaterThan(at("session in_progress"));
    expect(at("task_assigned")).toBeGreaterThan(at("stage started"));
    expect(at("stage cancelled")).toBeGreaterThan(key.lastIndexOf("task_assigned"));
    expect(at("session cancelled")).toBeGreaterThan(at("stage cancelled"));
  }, 120_000);

  it("MCP session headers: the parent and its sub-agent each reach the server with their own execution id, and each gets its own cleanup", async () => {
    const id = await submitAlert(sys, "SubSandbox", { pod: "payments-api-7f9c" });
    const done = await finished(id, 90_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("Both of us reached the sandbox.");
    const [parent, sub] = executionsOf(done);
    expect(sub).toMatchObject({ agent_name: "SandboxWorker", parent_execution_id: parent?.id });
    const parentId = parent?.id ?? "?";
    const subId = sub?.id ?? "?";
    // Each tool call was answered for its own execution (never the session's id).
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    const whoami = (executionId: string) =>
      timeline.events.find(
        (e) =>
          e.execution_id === executionId &&
          e.event_type === "llm_tool_call" &&
          (e.metadata as { tool_name?: string } | null)?.tool_name === "whoami",
      )?.content;
    expect(whoami(parentId)).toContain(`sandbox:${parentId}`);
    expect(whoami(subId)).toContain(`sandbox:${subId}`);
    const mine = sandbox.sessionHeaders.filter((h) => h === parentId || h === subId);
    expect(new Set(mine)).toEqual(new Set([parentId, subId]));
    expect(sandbox.sessionHeaders).not.toContain(id);
    // Each execution's MCP session is cleaned up; the sub-agent's exactly once.
    await until(() => [parentId, subId].every((e) => sandbox.deleted.includes(e)), {
      what: "both cleanups",
      timeoutMs: 30_000,
    });
    expect(sandbox.deleted.filter((e) => e === subId)).toHaveLength(1);
  }, 120_000);

  it("every runner killed while a parent waits: new runners finish the sub-agent and resume the parent, each result once", async () => {
    const id = await submitAlert(sys, "SubKill");
    await until(
      async () => {
        const rows = await sql`
          SELECT 1 FROM agent_executions p JOIN agent_executions c ON c.parent_execution_id = p.id
          WHERE p.session_id = ${id} AND p.suspended_at IS NOT NULL AND c.status = 'active'`;
        return rows.length > 0;
      },
      { what: "the parent suspended with PatientAgent running", timeoutMs: 60_000 },
    );
    const runners = sys.stack.processes.filter((p) => p.name.startsWith("agent-runner-"));
    for (const runner of runners) await runner.kill();
    // A runner killed after parking the parent but before acknowledging its delivery leaves
    // that delivery to be made again by JetStream: the same request, sent here again (without
    // the message id that would let the stream drop it as a duplicate). It must not restart
    // the parent, which would abandon PatientAgent.
    const [parked] = await sql<{ request: unknown; attempt: number }[]>`
      SELECT resume_request AS request, attempt FROM agent_executions
      WHERE session_id = ${id} AND parent_execution_id IS NULL`;
    const request = ExecutionRequestedSchema.parse(parked?.request);
    expect(request).toMatchObject({ agent_name: "OrchKill" });
    const nc = await connect({ servers: natsUrl() });
    try {
      await jetstream(nc).publish(
        `${sys.stack.prefix}.${WORK_SUBJECTS.executionRequested}`,
        JSON.stringify(request),
      );
    } finally {
      await nc.close();
    }
    await sys.stack.start("agent-runner");
    await sys.stack.start("agent-runner");

    const done = await finished(id, 180_000);
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toBe("Concluded with PatientAgent's comparison.");
    const [parent, sub] = executionsOf(done);
    expect(sub).toMatchObject({
      agent_name: "PatientAgent",
      status: "completed",
      parent_execution_id: parent?.id,
    });
    // The parent was woken once, not restarted by the redelivered request.
    expect(await attemptOf(parent?.id ?? "")).toBe((parked?.attempt ?? 0) + 1);
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    expect(timeline.events.filter((e) => e.event_type === "sub_agent_result")).toHaveLength(1);
    const { conversation } = await lastConversation(id, parent?.id ?? "");
    expect(
      conversation.filter(
        (m) => m.role === "user" && m.content.startsWith("[Sub-agent completed] PatientAgent"),
      ),
    ).toHaveLength(1);
  }, 240_000);
});
