import { resolve } from "node:path";
import { TERMINAL_EXECUTION_STATUSES, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarsy } from "../../packages/cli/test/support.ts";
import {
  announced,
  announcedStatuses,
  ask,
  chatStage,
  detail,
  SCENARIOS_DIR,
  saveLogs,
  sleep,
  submitAlert,
  timeline,
  waitStatus,
} from "./scenario-support.ts";
import { bootSystem, type E2E } from "./support.ts";

/**
 * FailureResilience, FailurePropagation, Cancellation, Timeout and Concurrency share one stack
 * (testdata/scenarios: one chain per scenario, queue.max_concurrent_sessions 1,
 * session_timeout 20s, chat_timeout 6s). Each runs after the previous one finished.
 */
let sys: E2E;
/** The session's chat stage once it has ended (any terminal status). */
const chatEnded = (id: string, stageId: string, timeoutMs: number, what: string) =>
  until(
    async () => {
      const s = await chatStage(sys, id, stageId);
      return TERMINAL_EXECUTION_STATUSES.includes(s.status) ? s : null;
    },
    { what, timeoutMs },
  );
let ws: TestClient;
let sql: postgres.Sql;

beforeAll(async () => {
  sys = await bootSystem({
    configDir: SCENARIOS_DIR,
    llmScriptPath: resolve(SCENARIOS_DIR, "llm-script.yaml"),
  });
  ws = await connectClient(sys.stack.wsUrl);
  ws.send({ action: "subscribe", channel: "sessions" });
  await ws.waitFor((f) => f.type === "subscription.confirmed");
  sql = postgres(sys.database.url, { max: 1, onnotice: () => {} });
}, 180_000);

afterAll(async () => {
  saveLogs(sys, "scenarios");
  await sql?.end();
  await ws?.close();
  await sys?.stop();
}, 60_000);

describe("e2e: Concurrency", () => {
  it("runs one session at a time under max_concurrent_sessions 1, FIFO, and completes all", async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await submitAlert(sys, "Quick", { n: i }));
    let maxActive = 0;
    let sawQueued = false;
    await until(
      async () => {
        const r = await sys.api<{ active: { id: string }[]; queued: { id: string }[] }>(
          "/api/v1/sessions/active",
        );
        maxActive = Math.max(maxActive, r.body.active.length);
        if (r.body.queued.length > 0) sawQueued = true;
        const done = await Promise.all(ids.map((id) => detail(sys, id)));
        return done.every((d) => TERMINAL_SESSION_STATUSES.includes(d.status)) ? done : null;
      },
      { what: "three sessions to complete", timeoutMs: 90_000 },
    );
    const statuses = (await Promise.all(ids.map((id) => detail(sys, id)))).map((d) => d.status);
    expect(statuses).toEqual(["completed", "completed", "completed"]); // wire-literal: expected outcome
    expect(maxActive).toBe(1);
    expect(sawQueued).toBe(true);
    const sessions = await Promise.all(ids.map((id) => detail(sys, id)));
    // FIFO: each started after the previous one completed, in submission order.
    for (let i = 1; i < sessions.length; i++) {
      const prev = sessions[i - 1];
      const cur = sessions[i];
      expect(Date.parse(cur?.started_at ?? "")).toBeGreaterThanOrEqual(
        Date.parse(prev?.completed_at ?? ""),
      );
    }
    // The sessions channel announced them starting in submission order (`in_progress` is
    // announced again at every stage start: the first one is the admission).
    const startOrder = ws.frames.flatMap((f) =>
      "id" in f &&
      f.channel === "sessions" &&
      f.payload.type === "session.status" &&
      f.payload.status === "in_progress" &&
      ids.includes(f.payload.session_id)
        ? [f.payload.session_id]
        : [],
    );
    expect([...new Set(startOrder)]).toEqual(ids);
  }, 120_000);
});

describe("e2e: FailureResilience", () => {
  it("completes under policy any when one parallel agent fails", async () => {
    const id = await submitAlert(sys, "ResilienceAny");
    const d = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(d.status).toBe("completed");
    const parallel = d.stages.find((s) => s.stage_name === "parallel");
    expect(parallel?.status).toBe("completed");
    const byAgent = Object.fromEntries(
      (parallel?.executions ?? []).map((e) => [e.agent_name, e.status]),
    );
    expect(byAgent).toEqual({ SteadyAgent: "completed", FlakyAgent: "failed" });
    expect(d.final_analysis).toContain("found the pod out of memory");
    expect(d.executive_summary).toBe("Executive summary: handled.");
    expect(d.executive_summary_error).toBeNull();
    const events = await timeline(sys, id);
    expect(events.some((e) => e.content.includes("flaky provider refused the request"))).toBe(true);
  }, 90_000);

  it("completes with executive_summary_error when the executive summary fails", async () => {
    const id = await submitAlert(sys, "SummaryFails");
    const d = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(d.status).toBe("completed");
    expect(d.final_analysis).toContain("SUMMARY-WILL-FAIL");
    expect(d.executive_summary).toBeNull();
    expect(d.executive_summary_error).toContain("summary provider is down");
    await announced(ws, id, "completed");
    expect(announcedStatuses(ws, id).at(-1)).toBe("completed");
  }, 90_000);
});

describe("e2e: FailurePropagation", () => {
  it("fails the session under policy all when one agent fails, without a later stage", async () => {
    const id = await submitAlert(sys, "PropagationAll");
    const d = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(d.status).toBe("failed");
    expect(d.error_message).toContain("broken agent cannot reach its model");
    expect(d.stages.map((s) => s.stage_name)).toEqual(["parallel"]);
    expect(d.stages[0]?.status).toBe("failed");
    expect(d.final_analysis).toBeNull();
    await announced(ws, id, "failed");
    const statuses = announcedStatuses(ws, id);
    expect(statuses.at(-1)).toBe("failed");
    // Nothing of LaterAgent ever ran: no trace of its answer anywhere.
    const events = await timeline(sys, id);
    expect(events.some((e) => e.content.includes("must never run"))).toBe(false);
  }, 90_000);
});

describe("e2e: Cancellation", () => {
  it("cancels a running session", async () => {
    const id = await submitAlert(sys, "Slow");
    await until(
      async () => {
        const d = await detail(sys, id);
        return d.status === "in_progress" && d.stages[0]?.executions[0]?.status === "active";
      },
      { what: "the slow agent to be running", timeoutMs: 30_000 },
    );
    const started = Date.now();
    const r = await sys.api<{ status: string }>(`/api/v1/sessions/${id}/cancel`, {
      method: "POST",
    });
    expect(r.status).toBe(202);
    expect(r.body.status).toBe("cancel_requested");
    const d = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 30_000);
    expect(d.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(d.stages[0]?.status).toBe("cancelled");
    expect(d.stages[0]?.executions[0]?.status).toBe("cancelled");
    await announced(ws, id, "cancelled");
    expect(announcedStatuses(ws, id).at(-1)).toBe("cancelled");
    // A finished session has nothing to cancel.
    const again = await sys.api(`/api/v1/sessions/${id}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
  }, 90_000);

  it("cancels a chat turn in flight; the session stays completed", async () => {
    const id = await submitAlert(sys, "Quick");
    await waitStatus(sys, id, ["completed"], 60_000);
    const stage = await ask(sys, id, "CANCEL-ME please: what changed?");
    // The conversation is stored right before the LLM call: then the answer is in flight.
    await until(
      async () => {
        const rows = await sql`
          SELECT 1 FROM messages m JOIN agent_executions e ON e.id = m.execution_id
          WHERE e.stage_id = ${stage.id}`;
        return rows.length > 0;
      },
      { what: "the chat answer to be in flight", timeoutMs: 30_000 },
    );
    await sleep(500);
    const r = await sys.api(`/api/v1/sessions/${id}/cancel`, { method: "POST" });
    expect(r.status).toBe(202);
    const ended = await chatEnded(id, stage.id, 30_000, "the chat stage to end");
    expect(ended.status).toBe("cancelled");
    const d = await detail(sys, id);
    expect(d.status).toBe("completed");
    // The chat still works after a cancelled turn.
    const next = await ask(sys, id, "AFTER-CANCEL: and now?");
    const answered = await chatEnded(id, next.id, 30_000, "the next chat answer");
    expect(answered.status).toBe("completed");
    const events = await timeline(sys, id);
    expect(
      events.some((e) => e.stage_id === next.id && e.content === "Chat: here is your answer."),
    ).toBe(true);
  }, 120_000);
});

describe("e2e: Timeout", () => {
  it("times out a session that outlives queue.session_timeout", async () => {
    const id = await submitAlert(sys, "Stuck");
    const running = await waitStatus(sys, id, ["in_progress"], 30_000);
    // On-call watches it with the CLI: the command says so, and exits 5 for a timeout.
    const env = { TARSY_API_URL: sys.stack.apiUrl, TARSY_WS_URL: sys.stack.wsUrl };
    const watching = tarsy(["session", "watch", id], { env, timeoutMs: 80_000 });
    const d = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(d.status).toBe("timed_out");
    const watch = await watching;
    expect(watch.stdout).toMatch(/● session timed_out.*\n$/);
    expect(watch.code).toBe(5);
    const took = Date.parse(d.completed_at ?? "") - Date.parse(running.started_at ?? "");
    expect(took).toBeGreaterThanOrEqual(19_000);
    expect(took).toBeLessThan(40_000);
    expect(d.stages[0]?.executions[0]?.status).toBe("timed_out");
    // Each level says which limit ran out.
    const why = "session timed out after 20s (queue.session_timeout)";
    expect(d.error_message).toBe(why);
    expect(d.stages[0]?.error_message).toBe(why);
    expect(d.stages[0]?.executions[0]?.error_message).toBe(why);
    // Nothing is left streaming: every event of the session ended with it.
    const still = (await timeline(sys, id)).filter((e) => e.status === "streaming");
    expect(still).toEqual([]);
    await announced(ws, id, "timed_out");
    expect(announcedStatuses(ws, id).at(-1)).toBe("timed_out");
  }, 90_000);

  it("times out a chat turn that outlives queue.chat_timeout; the session stays completed", async () => {
    const id = await submitAlert(sys, "Quick");
    await waitStatus(sys, id, ["completed"], 60_000);
    const asked = Date.now();
    const stage = await ask(sys, id, "TIME-ME-OUT: explain everything");
    const ended = await chatEnded(id, stage.id, 45_000, "the chat stage to end");
    expect(ended.status).toBe("timed_out");
    expect(Date.now() - asked).toBeGreaterThanOrEqual(5_000);
    expect((await detail(sys, id)).status).toBe("completed");
    expect(ended.error_message).toBe("chat turn timed out after 6s (queue.chat_timeout)");
    expect((await timeline(sys, id)).filter((e) => e.status === "streaming")).toEqual([]);
    // The next question is answered.
    const next = await ask(sys, id, "AFTER-TIMEOUT: and now?");
    const answered = await chatEnded(id, next.id, 30_000, "the next chat answer");
    expect(answered.status).toBe("completed");
    expect(
      (await timeline(sys, id)).some(
        (e) =>
          e.stage_id === next.id && e.content === "Chat: after the timeout, here is your answer.",
      ),
    ).toBe(true);
  }, 90_000);
});
