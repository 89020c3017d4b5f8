import { connectClient, type TestClient, waitForEvents } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bootSystem,
  DEMO_ALERT,
  dumpDatabase,
  type E2E,
  PLANTED,
  PLANTED_B64,
  until,
} from "./support.ts";

interface Detail {
  status: string;
  final_analysis: string | null;
  executive_summary: string | null;
  stages: {
    id: string;
    stage_name: string;
    kind: string;
    status: string;
    executions: { agent_name: string; status: string }[];
  }[];
  chat: { messages: { content: string; stage_id: string | null }[] } | null;
}
interface Timeline {
  events: {
    id: string;
    sequence_number: number;
    event_type: string;
    status: string;
    content: string;
    stage_id: string | null;
    metadata: Record<string, unknown> | null;
  }[];
}

/**
 * Pipeline: a demo alert through every real service — multi-stage chain with a parallel stage
 * and synthesis, tool calls through the gateway against a real MCP server, masking of a planted
 * secret, executive summary, two chat turns — checked on all four data layers.
 */
describe("e2e: Pipeline", () => {
  let sys: E2E;
  let ws: TestClient;
  let sessionId: string;

  beforeAll(async () => {
    sys = await bootSystem();
    ws = await connectClient(sys.stack.wsUrl);
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed");
    const submitted = await sys.api<{ session_id: string; status: string }>("/api/v1/alerts", {
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

  it("completes the investigation with the stages, final analysis and summary", async () => {
    const detail = await until(
      async () => {
        const r = await sys.api<Detail>(`/api/v1/sessions/${sessionId}`);
        return ["completed", "failed", "cancelled", "timed_out"].includes(r.body.status)
          ? r.body
          : null;
      },
      120_000,
      "the session to finish",
    );
    expect(detail.status).toBe("completed");
    expect(detail.stages.map((s) => [s.stage_name, s.kind, s.status])).toEqual([
      ["triage", "investigation", "completed"],
      ["deep-dive", "investigation", "completed"],
      ["deep-dive - Synthesis", "synthesis", "completed"],
    ]);
    expect(detail.stages[1]?.executions.map((e) => e.agent_name)).toEqual([
      "LogAgent",
      "EventsAgent",
    ]);
    expect(detail.final_analysis).toContain("## Root cause");
    expect(detail.executive_summary).toContain("JVM heap exceeds the container memory limit");
  }, 150_000);

  it("records the timeline in order: thinking, responses, tool calls with results, final analyses", async () => {
    const { body } = await sys.api<Timeline>(`/api/v1/sessions/${sessionId}/timeline`);
    const seqs = body.events.map((e) => e.sequence_number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(body.events.every((e) => e.status === "completed")).toBe(true);
    const types = body.events.map((e) => e.event_type);
    for (const t of [
      "llm_thinking",
      "llm_response",
      "llm_tool_call",
      "final_analysis",
      "executive_summary",
    ]) {
      expect(types).toContain(t);
    }
    const podsCall = body.events.find(
      (e) =>
        e.event_type === "llm_tool_call" &&
        String(e.metadata?.tool_name ?? "").includes("get_pods"),
    );
    expect(podsCall?.content).toContain("CrashLoopBackOff");
    const secretCall = body.events.find(
      (e) =>
        e.event_type === "llm_tool_call" &&
        String(e.metadata?.tool_name ?? "").includes("get_secret"),
    );
    expect(secretCall?.content).toContain("[MASKED_SECRET_DATA]");
  });

  it("never lets the planted secret out: not in the database, the API, the events or the logs", async () => {
    const db = await dumpDatabase(sys.database.url);
    expect(db).toContain("[MASKED_SECRET_DATA]");
    for (const secret of [PLANTED, PLANTED_B64]) {
      expect(db).not.toContain(secret);
      expect(JSON.stringify(ws.frames)).not.toContain(secret);
      expect(sys.logs.join("\n")).not.toContain(secret);
      const trace = await sys.api(`/api/v1/sessions/${sessionId}/trace`);
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
    // Every timeline event of the API was announced (created) over the WebSocket.
    const { body } = await sys.api<Timeline>(`/api/v1/sessions/${sessionId}/timeline`);
    const announced = new Set(
      events.flatMap((e) =>
        e.payload.type === "timeline_event.created" ? [e.payload.event_id] : [],
      ),
    );
    for (const event of body.events) expect(announced.has(event.id)).toBe(true);
    // The sessions channel saw the session start and complete.
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
    const { body } = await sys.api<{
      stages: {
        stage_name: string;
        executions: {
          agent_name: string;
          llm_interactions: { id: string }[];
          mcp_interactions: { id: string; tool_name: string }[];
        }[];
      }[];
      session_interactions: { id: string }[];
    }>(`/api/v1/sessions/${sessionId}/trace`);
    const triage = body.stages.find((s) => s.stage_name === "triage")?.executions[0];
    expect(triage?.llm_interactions.length).toBe(3);
    expect(triage?.mcp_interactions.map((m) => m.tool_name)).toEqual(
      expect.arrayContaining(["get_pods", "get_pod_logs"]),
    );
    const llm = await sys.api<{ conversation?: unknown[]; messages?: unknown[] }>(
      `/api/v1/sessions/${sessionId}/trace/llm/${triage?.llm_interactions[2]?.id}`,
    );
    expect(llm.status).toBe(200);
    expect(JSON.stringify(llm.body)).toContain("CrashLoopBackOff");
    const mcpId = triage?.mcp_interactions.find((m) => m.tool_name === "get_pods")?.id;
    const mcp = await sys.api(`/api/v1/sessions/${sessionId}/trace/mcp/${mcpId}`);
    expect(JSON.stringify(mcp.body)).toContain("payments");
    expect(body.session_interactions.length).toBe(1);
  });

  it("answers two chat turns; the second sees the first", async () => {
    const ask = async (content: string, turn: number) => {
      const r = await sys.api<{ chat_id: string; message_id: string }>(
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
          const d = await sys.api<Detail>(`/api/v1/sessions/${sessionId}`);
          const chatStages = d.body.stages.filter((s) => s.kind === "chat");
          const last = chatStages[turn - 1];
          return last && last.status !== "pending" && last.status !== "active" ? last : null;
        },
        60_000,
        `answer to "${content}"`,
      );
    };
    const first = await ask("Which pod failed first?", 1);
    expect(first.status).toBe("completed");
    const second = await ask("What would each fix cost?", 2);
    expect(second.status).toBe("completed");
    const { body } = await sys.api<Timeline>(`/api/v1/sessions/${sessionId}/timeline`);
    const answers = body.events.filter(
      (e) => e.event_type === "final_analysis" && e.stage_id === second.id,
    );
    expect(answers[0]?.content).toContain("costs about 1Gi more per replica");
    const questions = body.events
      .filter((e) => e.event_type === "user_question")
      .map((e) => e.content);
    expect(questions).toEqual(["Which pod failed first?", "What would each fix cost?"]);
    // The second turn's LLM request carried the first question and answer.
    const trace = await sys.api<{
      stages: { stage_id: string; executions: { llm_interactions: { id: string }[] }[] }[];
    }>(`/api/v1/sessions/${sessionId}/trace`);
    const secondCall = trace.body.stages.find((s) => s.stage_id === second.id)?.executions[0]
      ?.llm_interactions[0];
    const sent = await sys.api(`/api/v1/sessions/${sessionId}/trace/llm/${secondCall?.id}`);
    expect(JSON.stringify(sent.body)).toContain("Which pod failed first?");
    expect(JSON.stringify(sent.body)).toContain("03:12:04Z");
    await waitForEvents(ws, 1);
  }, 150_000);
});
