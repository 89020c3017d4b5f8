import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TraceListResponse,
  type WsServerFrame,
} from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveLogs, submitAlert, timeline } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/parity-sessions");

/**
 * Session-level parity with the Go TARSy: cancelling a parallel stage mid-stream, a failed
 * stage's error_message, two sessions at once. One stack (testdata/parity-sessions,
 * max_concurrent_sessions 2, two agent-runners); the tests run one after the other.
 */
let sys: E2E;
const clients: TestClient[] = [];

beforeAll(async () => {
  sys = await bootSystem({ configDir: CONFIG, llmScriptPath: resolve(CONFIG, "llm-script.yaml") });
}, 180_000);

afterAll(async () => {
  saveLogs(sys, "parity-sessions");
  await Promise.all(clients.map((c) => c.close()));
  await sys?.stop();
}, 60_000);

/** A WebSocket client watching the given sessions' channels (their events replayed). */
async function watch(...sessionIds: string[]): Promise<TestClient> {
  const ws = await connectClient(sys.stack.wsUrl);
  clients.push(ws);
  for (const id of sessionIds) await follow(ws, id);
  return ws;
}

async function follow(ws: TestClient, sessionId: string): Promise<void> {
  const channel = `session:${sessionId}`;
  ws.send({ action: "subscribe", channel });
  await ws.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);
}

const onChannel = (f: WsServerFrame, sessionId: string) =>
  "channel" in f && f.channel === `session:${sessionId}`;

function isStatus(f: WsServerFrame, sessionId: string, status: string): boolean {
  return (
    "id" in f &&
    onChannel(f, sessionId) &&
    f.payload.type === "session.status" &&
    f.payload.status === status
  );
}

/** The streamed text of a session's channel: its chunks' deltas in arrival order. */
function streamedText(ws: TestClient, sessionId: string): string {
  return ws.frames
    .flatMap((f) => (f.type === "stream.chunk" && onChannel(f, sessionId) ? [f.payload.delta] : []))
    .join("");
}

async function sessionOf(id: string): Promise<SessionDetail> {
  const r = await sys.api<SessionDetail>(`/api/v1/sessions/${id}`);
  if (r.status !== 200) throw new Error(`GET session ${id}: ${r.status}`);
  return r.body;
}

async function ended(id: string, timeoutMs: number): Promise<SessionDetail> {
  return until(
    async () => {
      const d = await sessionOf(id);
      return TERMINAL_SESSION_STATUSES.includes(d.status) ? d : null;
    },
    { what: `session ${id} to end`, timeoutMs },
  );
}

/** Every LLM interaction of a session with its conversation, through the trace API. */
async function llmInteractionsOf(sessionId: string): Promise<LLMInteractionDetail[]> {
  const trace = (await sys.api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
  const ids = [
    ...trace.stages.flatMap((s) =>
      s.executions.flatMap((e) => e.llm_interactions.map((i) => i.id)),
    ),
    ...trace.session_interactions.map((i) => i.id),
  ];
  return Promise.all(
    ids.map(
      async (i) =>
        (await sys.api<LLMInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/llm/${i}`)).body,
    ),
  );
}

describe("e2e: parity — sessions", () => {
  it("cancelling a stage with parallel agents cancels every agent, and nothing streams after", async () => {
    const id = await submitAlert(sys, "CancelParallel", { note: "STREAM- three slow agents" });
    const ws = await watch(id);
    // All three agents are streaming their answers.
    const streaming = await until(
      async () => {
        const executions = new Set(
          ws.frames.flatMap((f) =>
            f.type === "stream.chunk" && onChannel(f, id) ? [f.payload.execution_id] : [],
          ),
        );
        return executions.size === 3 ? executions : null;
      },
      { what: "the three parallel agents to stream", timeoutMs: 60_000 },
    );
    const r = await sys.api<{ status: string }>(`/api/v1/sessions/${id}/cancel`, {
      method: "POST",
    });
    expect(r.status).toBe(202);
    await ws.waitFor((f) => isStatus(f, id, "cancelled"), 30_000);
    const cancelledAt = ws.frames.findIndex((f) => isStatus(f, id, "cancelled"));

    // Each agent's answer ended `cancelled` before the session did.
    for (const execution of streaming) {
      const endedAt = ws.frames.findIndex(
        (f) =>
          "id" in f &&
          onChannel(f, id) &&
          f.payload.type === "timeline_event.completed" &&
          f.payload.execution_id === execution,
      );
      expect(endedAt).toBeGreaterThan(-1);
      expect(endedAt).toBeLessThan(cancelledAt);
      const end = ws.frames[endedAt];
      const status =
        end && "id" in end && end.payload.type === "timeline_event.completed"
          ? end.payload.status
          : null;
      expect(status).toBe("cancelled");
    }

    // A later session streams through the same runners and relay on the same connection. The
    // cancelled answers had half a minute of characters left (one every 40 ms): had any agent
    // kept streaming, its chunks would have arrived while this one ran to its end.
    const marker = await submitAlert(sys, "Marker");
    await follow(ws, marker);
    await ws.waitFor((f) => f.type === "stream.chunk" && onChannel(f, marker), 60_000);
    await ws.waitFor((f) => isStatus(f, marker, "completed"), 60_000);
    // After `cancelled`, only the review state a cancelled session starts with (announced
    // right after its status): no chunk, no event of the stopped agents.
    const after = ws.frames.slice(cancelledAt + 1).filter((f) => onChannel(f, id));
    expect(after.map((f) => ("id" in f ? f.payload.type : f.type))).toEqual(["review.status"]);
    expect(after.map((f) => ("id" in f ? f.payload : null))).toMatchObject([
      { type: "review.status", review_status: "reviewed", actor: "system" },
    ]);

    const d = await sessionOf(id);
    expect(d.status).toBe("cancelled");
    expect(d.stages.map((s) => s.stage_name)).toEqual(["fan-out"]);
    const stage = d.stages[0];
    expect(stage?.status).toBe("cancelled");
    expect(stage?.executions).toHaveLength(3);
    for (const execution of stage?.executions ?? []) expect(execution.status).toBe("cancelled");
    expect(new Set(stage?.executions.map((e) => e.id))).toEqual(streaming);
    expect(d.final_analysis).toBeNull();
    expect(d.executive_summary).toBeNull();
    // No synthesis and no executive summary ran after the cancel.
    const types = (await llmInteractionsOf(id)).map((i) => i.interaction_type);
    expect(types).not.toContain("synthesis");
    expect(types).not.toContain("executive_summary");
    const events = await timeline(sys, id);
    expect(events.some((e) => e.content.includes("MUST-NOT-RUN"))).toBe(false);
  }, 150_000);

  it("a failed stage says why: its error_message names the failure", async () => {
    const id = await submitAlert(sys, "Quota");
    const d = await ended(id, 60_000);
    expect(d.status).toBe("failed");
    expect(d.stages).toHaveLength(1);
    const stage = d.stages[0];
    expect(stage?.stage_name).toBe("quota-check");
    expect(stage?.status).toBe("failed");
    // The stage says what failed it: its agent's LLM error, as the provider put it.
    expect(stage?.error_message).toBe("LLM error: quota exhausted for project X");
    expect(stage?.executions).toHaveLength(1);
    expect(stage?.executions[0]?.status).toBe("failed");
    expect(stage?.executions[0]?.error_message).toBe("LLM error: quota exhausted for project X");
    // The session names the stage that failed it, and why.
    expect(d.error_message).toBe(
      'stage "quota-check" failed: LLM error: quota exhausted for project X',
    );
    expect(d.final_analysis).toBeNull();
    // The timeline shows the failure too.
    const events = await timeline(sys, id);
    expect(events.some((e) => e.content.includes("quota exhausted for project X"))).toBe(true);
  }, 90_000);

  it("two sessions at once on the real runners: nothing of one appears in the other", async () => {
    const [alpha, omega] = await Promise.all([
      submitAlert(sys, "Twin", { note: "TWIN-ALPHA disk pressure", node: "alpha-1" }),
      submitAlert(sys, "Twin", { note: "TWIN-OMEGA certificate expiry", gateway: "omega-7" }),
    ]);
    const ws = await watch(alpha, omega);
    const [a, o] = await Promise.all([ended(alpha, 90_000), ended(omega, 90_000)]);
    expect(a.status).toBe("completed");
    expect(o.status).toBe("completed");
    await ws.waitFor((f) => isStatus(f, alpha, "completed"), 10_000);
    await ws.waitFor((f) => isStatus(f, omega, "completed"), 10_000);

    // They ran at the same time: each started before the other completed ...
    const t = (s: string | null) => Date.parse(s ?? "");
    expect(t(a.started_at)).toBeLessThan(t(o.completed_at));
    expect(t(o.started_at)).toBeLessThan(t(a.completed_at));
    // ... and their answers streamed interleaved on the one connection.
    const chunkIndexes = (id: string) =>
      ws.frames.flatMap((f, i) => (f.type === "stream.chunk" && onChannel(f, id) ? [i] : []));
    const ca = chunkIndexes(alpha);
    const co = chunkIndexes(omega);
    expect(ca.length).toBeGreaterThan(0);
    expect(co.length).toBeGreaterThan(0);
    expect(ca[0]).toBeLessThan(co.at(-1) ?? -1);
    expect(co[0]).toBeLessThan(ca.at(-1) ?? -1);

    const sessions = [
      { id: alpha, d: a, own: "TWIN-ALPHA", other: "TWIN-OMEGA", answer: "node alpha-1" },
      { id: omega, d: o, own: "TWIN-OMEGA", other: "TWIN-ALPHA", answer: "gateway omega-7" },
    ];
    for (const { id, d, own, other, answer } of sessions) {
      expect(d.final_analysis).toContain(own);
      expect(d.final_analysis).toContain(answer);
      expect(d.final_analysis).not.toContain(other);
      expect(d.executive_summary).toContain(own);
      expect(d.executive_summary).not.toContain(other);
      expect(JSON.stringify(d)).not.toContain(other);

      const events = JSON.stringify(await timeline(sys, id));
      expect(events).toContain(own);
      expect(events).not.toContain(other);

      const interactions = await llmInteractionsOf(id);
      expect(interactions.length).toBeGreaterThanOrEqual(2);
      for (const i of interactions) {
        const conversation = JSON.stringify(i.conversation);
        expect(conversation).toContain(own);
        expect(conversation).not.toContain(other);
        expect(i.response_text ?? "").not.toContain(other);
      }

      // Every event and chunk on a session's channel is that session's.
      const frames = ws.frames.filter(
        (f) => onChannel(f, id) && (f.type === "stream.chunk" || "id" in f),
      );
      for (const f of frames) expect("session_id" in f ? f.session_id : null).toBe(id);
      const seen = JSON.stringify(frames);
      expect(seen).toContain(own);
      expect(seen).not.toContain(other);
      const streamed = streamedText(ws, id);
      expect(streamed).toContain(own);
      expect(streamed).not.toContain(other);
    }
  }, 150_000);
});
