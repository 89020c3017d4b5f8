import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goldenJson, goldenSession } from "./golden.ts";
import {
  bootSystem,
  DEMO_ALERT,
  dumpDatabase,
  type E2E,
  PLANTED,
  PLANTED_B64,
  ROOT,
} from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/pipeline");
const GOLDEN = resolve(ROOT, "test/e2e/golden/pipeline");

/**
 * Pipeline: one alert through every real service and every kind of step — a triage that runs
 * out of iterations (forced conclusion) with a tool result large enough to be summarized, a
 * stage of two agents in parallel, a stage of one agent as two replicas, a synthesis of each,
 * masking of a planted secret, the executive summary and two chat turns — checked on all four
 * data layers (WebSocket events, API, LLM interactions, MCP interactions) by targeted
 * assertions and by golden files (`golden/pipeline`; update: see test/e2e/README.md).
 */
describe("e2e: Pipeline", () => {
  let sys: E2E;
  let ws: TestClient;
  let sessionId: string;
  const api = <T>(path: string, init?: RequestInit) => sys.api<T>(path, init);
  const llmRequest = async (id: string | undefined) =>
    (await api<LLMInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/llm/${id}`)).body;
  const executionsOf = async (stageName: string) =>
    (await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body.stages.find(
      (s) => s.stage_name === stageName,
    )?.executions ?? [];
  /** Everything the model was sent in an interaction, as one string. */
  const sentText = (detail: LLMInteractionDetail) =>
    detail.conversation.map((m) => m.content).join("\n");

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
    });
    ws = await connectClient(sys.stack.wsUrl);
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed");
    const submitted = await api<{ session_id: string; status: string }>("/api/v1/alerts", {
      method: "POST",
      headers: { "x-forwarded-user": "alice" },
      body: JSON.stringify(DEMO_ALERT),
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.status).toBe("queued");
    sessionId = submitted.body.session_id;
    ws.send({ action: "subscribe", channel: `session:${sessionId}` });
    await ws.waitFor(
      (f) => f.type === "subscription.confirmed" && f.channel === `session:${sessionId}`,
    );
  }, 180_000);

  afterAll(async () => {
    await ws?.close();
    await sys?.stop();
  }, 60_000);

  it("runs the three stages, two syntheses and the summary in order", async () => {
    const detail = await until(
      async () => {
        const r = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
        return TERMINAL_SESSION_STATUSES.includes(r.body.status) ? r.body : null;
      },
      { what: "the session to finish", timeoutMs: 120_000 },
    );
    expect(detail.status).toBe("completed");
    expect(
      detail.stages.map((s) => [s.stage_name, s.kind, s.status, s.parallel_type, s.stage_index]),
    ).toEqual([
      ["triage", "investigation", "completed", null, 1],
      ["deep-dive", "investigation", "completed", "multi_agent", 2],
      ["deep-dive - Synthesis", "synthesis", "completed", null, 3],
      ["verify", "investigation", "completed", "replica", 4],
      ["verify - Synthesis", "synthesis", "completed", null, 5],
    ]);
    expect(detail.stages[1]?.executions.map((e) => e.agent_name)).toEqual([
      "LogAgent",
      "EventsAgent",
    ]);
    expect(detail.stages[3]?.executions.map((e) => e.agent_name)).toEqual([
      "FixVerifier-1",
      "FixVerifier-2",
    ]);
    expect(detail.stages[3]?.expected_agent_count).toBe(2);
    // The final analysis is the last stage's result: the synthesis of the two replicas.
    expect(detail.final_analysis).toContain("## Verified fix");
    expect(detail.executive_summary).toContain("fits the 2Gi limit (verified twice)");
    expect(detail.executive_summary_error).toBeNull();
    // Stages ran one after another.
    const times = detail.stages.map((s) => [Date.parse(s.started_at ?? ""), s.completed_at]);
    for (let i = 1; i < detail.stages.length; i++) {
      expect(times[i]?.[0]).toBeGreaterThanOrEqual(Date.parse(String(times[i - 1]?.[1])));
    }
  }, 150_000);

  it("forces a conclusion when triage runs out of iterations, with the large result summarized", async () => {
    const [triage] = await executionsOf("triage");
    expect(triage?.llm_interactions.map((i) => [i.interaction_type, i.iteration])).toEqual([
      ["iteration", 1],
      ["iteration", 2],
      ["summarization", null],
      ["forced_conclusion", 3],
    ]);
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    const own = body.events.filter((e) => e.execution_id === triage?.execution_id);
    const final = own.find((e) => e.event_type === "final_analysis");
    expect(final?.metadata).toMatchObject({ forced_conclusion: true });
    expect(final?.content).toContain("Triage (forced conclusion)");
    const summary = own.find((e) => e.event_type === "mcp_tool_summary");
    expect(summary?.metadata).toMatchObject({
      server_name: "demo-cluster",
      tool_name: "describe_pod",
    });
    expect(summary?.content).toContain("last terminated OOMKilled (exit 137)");
    // The model was told of the summary, never given the raw description.
    const forced = await llmRequest(triage?.llm_interactions[3]?.id);
    const note =
      /The result of demo-cluster\.describe_pod was about (\d+) tokens and has been summarized/.exec(
        sentText(forced),
      );
    // Over the server's 300-token threshold, so it was summarized.
    expect(Number(note?.[1])).toBeGreaterThan(300);
    expect(sentText(forced)).not.toContain("QoS Class");
    expect(sentText(forced)).toContain("limit of 2 iterations");
    // The summarizer saw the raw description and the investigation so far.
    const summarizer = await llmRequest(triage?.llm_interactions[2]?.id);
    expect(sentText(summarizer)).toContain("QoS Class:          Burstable");
    expect(sentText(summarizer)).toContain("CrashLoopBackOff   14");
  });

  it("passes each stage's result on: synthesis replaces the parallel results", async () => {
    const triageResult = "Tentative: the heap setting causes it";
    for (const exec of await executionsOf("deep-dive")) {
      const first = await llmRequest(exec.llm_interactions[0]?.id);
      expect(sentText(first), exec.agent_name).toContain(triageResult);
    }
    const [deepDiveSynthesis] = await executionsOf("deep-dive - Synthesis");
    const synthesisIn = sentText(await llmRequest(deepDiveSynthesis?.llm_interactions[0]?.id));
    expect(synthesisIn).toContain("heap climbs to 1890Mi within 5 s");
    expect(synthesisIn).toContain("OOM-killed the java process on worker-3");
    for (const exec of await executionsOf("verify")) {
      const first = sentText(await llmRequest(exec.llm_interactions[0]?.id));
      expect(first, exec.agent_name).toContain(triageResult);
      expect(first, exec.agent_name).toContain("instead of `-Xmx1900m`");
      expect(first, exec.agent_name).not.toContain("heap climbs to 1890Mi within 5 s");
    }
    const [verifySynthesis] = await executionsOf("verify - Synthesis");
    const verifyIn = sentText(await llmRequest(verifySynthesis?.llm_interactions[0]?.id));
    expect(verifyIn).toContain("Replica 1: 75% of 2Gi is 1536Mi");
    expect(verifyIn).toContain("Replica 2: the worker pods use 1Gi limits");
    const trace = (await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
    const [summary] = trace.session_interactions;
    expect(summary?.interaction_type).toBe("executive_summary");
    expect(sentText(await llmRequest(summary?.id))).toContain("## Verified fix");
  });

  it("records the timeline in order: thinking, responses, tool calls with results, final analyses", async () => {
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    const seqs = body.events.map((e) => e.sequence_number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(body.events.every((e) => e.status === "completed")).toBe(true);
    const types = new Set(body.events.map((e) => e.event_type));
    for (const t of [
      "llm_thinking",
      "llm_response",
      "llm_tool_call",
      "mcp_tool_summary",
      "final_analysis",
      "executive_summary",
    ] as const) {
      expect(types.has(t), t).toBe(true);
    }
    const call = (tool: string) =>
      body.events.find(
        (e) =>
          e.event_type === "llm_tool_call" &&
          String((e.metadata as Record<string, unknown> | null)?.tool_name ?? "").includes(tool),
      );
    expect(call("get_pods")?.content).toContain("CrashLoopBackOff");
    expect(call("get_secret")?.content).toContain("[MASKED_SECRET_DATA]");
  });

  it("never lets the planted secret out: not in the database, the API, the events or the logs", async () => {
    const db = await dumpDatabase(sys.database.url);
    expect(db).toContain("[MASKED_SECRET_DATA]");
    const trace = await api(`/api/v1/sessions/${sessionId}/trace`);
    for (const secret of [PLANTED, PLANTED_B64]) {
      expect(db).not.toContain(secret);
      expect(JSON.stringify(ws.frames)).not.toContain(secret);
      expect(sys.logs.join("\n")).not.toContain(secret);
      expect(JSON.stringify(trace.body)).not.toContain(secret);
    }
  });

  it("streams every persistent event once, in order, with live token chunks", async () => {
    const channel = `session:${sessionId}`;
    const events = ws.frames.flatMap((f) => ("id" in f && f.channel === channel ? [f] : []));
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const chunks = ws.frames.filter((f) => f.type === "stream.chunk" && f.channel === channel);
    expect(chunks.length).toBeGreaterThan(5);
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    const announced = new Set(
      events.flatMap((e) =>
        e.payload.type === "timeline_event.created" ? [e.payload.event_id] : [],
      ),
    );
    for (const event of body.events) expect(announced.has(event.id)).toBe(true);
    const list = ws.frames.flatMap((f) =>
      "id" in f &&
      f.channel === "sessions" &&
      f.payload.type === "session.status" &&
      f.payload.session_id === sessionId
        ? [f.payload.status]
        : [],
    );
    expect(list[0]).toBe("in_progress");
    expect(list.at(-1)).toBe("completed");
  });

  it("keeps a full trace: LLM conversations and MCP calls with arguments and results", async () => {
    const [triage] = await executionsOf("triage");
    const calls = triage?.mcp_interactions.filter((m) => m.interaction_type === "tool_call");
    expect(calls?.map((m) => m.tool_name)).toEqual(["get_pods", "describe_pod", "get_pod_logs"]);
    const iteration2 = await llmRequest(triage?.llm_interactions[1]?.id);
    expect(sentText(iteration2)).toContain("CrashLoopBackOff");
    const mcpId = calls?.[0]?.id;
    const mcp = await api(`/api/v1/sessions/${sessionId}/trace/mcp/${mcpId}`);
    expect(JSON.stringify(mcp.body)).toContain("payments-api-7f9c6d5b8-x2kqz");
  });

  it("answers two chat turns; the second sees the first", async () => {
    const ask = async (content: string, turn: number) => {
      const r = await api<{ chat_id: string; message_id: string; stage_id: string }>(
        `/api/v1/sessions/${sessionId}/chat/messages`,
        {
          method: "POST",
          headers: { "x-forwarded-user": "alice" },
          body: JSON.stringify({ content }),
        },
      );
      expect(r.status).toBe(202);
      return until(
        async () => {
          const d = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
          const last = d.body.stages.filter((s) => s.kind === "chat")[turn - 1];
          // The POST named the stage that answers.
          if (last) expect(last.id).toBe(r.body.stage_id);
          return last && last.status !== "pending" && last.status !== "active" ? last : null;
        },
        { what: `answer to "${content}"`, timeoutMs: 60_000 },
      );
    };
    const first = await ask("Which pod failed first?", 1);
    expect(first.status).toBe("completed");
    const second = await ask("What would each fix cost?", 2);
    expect(second.status).toBe("completed");
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    const answer = body.events.find(
      (e) => e.event_type === "final_analysis" && e.stage_id === second.id,
    );
    expect(answer?.content).toContain("costs about 1Gi more per replica");
    const questions = body.events
      .filter((e) => e.event_type === "user_question")
      .map((e) => e.content);
    expect(questions).toEqual(["Which pod failed first?", "What would each fix cost?"]);
    // The first turn saw the investigation; the second also the first question and answer.
    const [firstExec] = await executionsOf(first.stage_name);
    const firstSent = sentText(await llmRequest(firstExec?.llm_interactions[0]?.id));
    expect(firstSent).toContain("## Verified fix");
    // Parallel agents' work reads agent by agent, whichever finished first.
    expect(firstSent.indexOf("Replica 1: 75% of 2Gi")).toBeGreaterThan(-1);
    expect(firstSent.indexOf("Replica 1: 75% of 2Gi")).toBeLessThan(
      firstSent.indexOf("Replica 2: the worker pods"),
    );
    const trace = (await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
    const secondExec = trace.stages.find((s) => s.stage_id === second.id)?.executions[0];
    const secondSent = sentText(await llmRequest(secondExec?.llm_interactions[0]?.id));
    expect(secondSent).toContain("Which pod failed first?");
    expect(secondSent).toContain("03:12:04Z");
  }, 150_000);

  it("matches the golden files on all four data layers", async () => {
    // Wait until the WebSocket has every completion the API shows (the last chat turn's too).
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    await until(
      async () => {
        const completed = new Set(
          ws.frames.flatMap((f) =>
            "id" in f && f.payload.type === "timeline_event.completed" ? [f.payload.event_id] : [],
          ),
        );
        const created = new Map(
          ws.frames.flatMap((f) =>
            "id" in f && f.payload.type === "timeline_event.created"
              ? [[f.payload.event_id, f.payload.status] as const]
              : [],
          ),
        );
        return body.events.every((e) => completed.has(e.id) || created.get(e.id) === "completed");
      },
      { what: "the WebSocket to show every completed timeline event", timeoutMs: 10_000 },
    );
    const files = await goldenSession(api, sessionId, ws.frames, { [ROOT]: "<repo>" });
    for (const [name, content] of Object.entries(files)) {
      await expect(goldenJson(content), name).toMatchFileSnapshot(resolve(GOLDEN, name));
    }
  });
});
