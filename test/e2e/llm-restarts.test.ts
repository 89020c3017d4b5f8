import { resolve } from "node:path";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  announcedStatuses,
  saveLogs,
  sleep,
  submitAlert,
  timeline,
  waitStatus,
} from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

/**
 * LlmRestarts: llm-service is killed (-9) mid-stream and between calls, with one replica
 * (then restarted) and with two; runners retry the cut calls. testdata/llm-restarts: one
 * agent whose answer streams for ~3 s, then the executive summary.
 */
const DIR = resolve(ROOT, "test/e2e/testdata/llm-restarts");
const ANSWER =
  "The payments-api pod restarts because its JVM heap outgrows the container memory limit; raise the limit to 3Gi or cap the heap at 1.5Gi.";
const SUMMARY = "payments-api is OOM-killed: its heap outgrows the memory limit.";

async function boot(llmReplicas: number): Promise<{ sys: E2E; sql: postgres.Sql }> {
  const sys = await bootSystem({
    configDir: DIR,
    llmScriptPath: resolve(DIR, "llm-script.yaml"),
    // debug: llm-service logs which session each call serves (to kill the one streaming).
    logLevel: "debug",
    replicas: { "llm-service": llmReplicas, "agent-runner": 2 },
  });
  return { sys, sql: postgres(sys.database.url, { max: 2, onnotice: () => {} }) };
}

async function watch(url: string, channel: string): Promise<TestClient> {
  const client = await connectClient(url);
  client.send({ action: "subscribe", channel });
  await client.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);
  return client;
}

function ids(client: TestClient, channel: string): number[] {
  return client.frames.flatMap((f) => ("id" in f && f.channel === channel ? [f.id] : []));
}

function chunks(client: TestClient, channel: string) {
  return client.frames.flatMap((f) =>
    f.type === "stream.chunk" && f.channel === channel ? [f.payload] : [],
  );
}

/** What a live viewer shows for an event after applying its chunks in arrival order. */
function shown(client: TestClient, channel: string, eventId: string): string {
  return chunks(client, channel)
    .filter((c) => c.event_id === eventId)
    .reduce((text, c) => (c.reset ? c.delta : text + c.delta), "");
}

/**
 * The session completed once, its WebSocket ids had no gap and no duplicate (a late viewer
 * replays exactly them), and the store holds one answer per LLM call.
 */
async function expectCompletedOnce(
  sys: E2E,
  sql: postgres.Sql,
  id: string,
  live: TestClient,
  sessions: TestClient,
): Promise<{ answerEventId: string; attempts: Record<string, number> }> {
  const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 150_000);
  expect(done.status).toBe("completed");
  expect(done.final_analysis).toBe(ANSWER);
  expect(done.executive_summary).toBe(SUMMARY);
  const channel = `session:${id}`;
  const events = await timeline(sys, id);
  const answers = events.filter((e) => e.event_type === "final_analysis");
  expect(answers.map((e) => [e.status, e.content])).toEqual([["completed", ANSWER]]);
  expect(events.filter((e) => e.event_type === "executive_summary").map((e) => e.content)).toEqual([
    SUMMARY,
  ]);
  expect(events.filter((e) => e.status !== "completed")).toEqual([]);
  // The live channel: strictly increasing ids; a late viewer replays the very same ones.
  const last = events.length;
  await until(async () => ids(live, channel).length >= last, {
    what: "the live viewer to see every event",
    timeoutMs: 15_000,
  });
  const seen = ids(live, channel);
  for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as number);
  const late = await watch(sys.stack.wsUrl, channel);
  await until(async () => ids(late, channel).length >= seen.length, {
    what: "the late replay",
    timeoutMs: 15_000,
  });
  expect(ids(late, channel)).toEqual(seen);
  await late.close();
  // The trace: one LLM interaction per execution and iteration, no error recorded.
  const rows = await sql<
    { agent_name: string; iteration: number | null; error_message: string | null; meta: unknown }[]
  >`
    SELECT e.agent_name, l.iteration, l.error_message, l.response_metadata AS meta
    FROM llm_interactions l JOIN agent_executions e ON e.id = l.execution_id
    WHERE l.session_id = ${id}`;
  const keys = rows.map((r) => `${r.agent_name}#${r.iteration}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(rows.map((r) => r.agent_name).sort()).toEqual(["ExecSummaryAgent", "Narrator"]);
  expect(rows.filter((r) => r.error_message !== null)).toEqual([]);
  const messages = await sql<{ content: string }[]>`
    SELECT m.content FROM messages m JOIN agent_executions e ON e.id = m.execution_id
    WHERE m.session_id = ${id} AND m.role = 'assistant' AND e.agent_name = 'Narrator'`;
  expect(messages.map((m) => m.content)).toEqual([ANSWER]);
  await until(async () => announcedStatuses(sessions, id).includes("completed"), {
    what: "the sessions channel to announce the completion",
    timeoutMs: 15_000,
  });
  const statuses = announcedStatuses(sessions, id);
  expect(statuses.filter((s) => s === "completed")).toHaveLength(1);
  const attempts = Object.fromEntries(
    rows.map((r) => [r.agent_name, (r.meta as { attempts?: number } | null)?.attempts ?? 1]),
  );
  return { answerEventId: (answers[0] as { id: string }).id, attempts };
}

/** Waits until a session's answer is streaming to the viewer. */
async function streaming(client: TestClient, channel: string, count = 3): Promise<void> {
  await until(async () => chunks(client, channel).length >= count, {
    what: "the answer to stream",
    timeoutMs: 60_000,
  });
}

async function readyCheck(sys: E2E, process: string) {
  const url = (sys.stack.metricsUrls[process] as string).replace(/\/metrics$/, "/ready");
  const response = await fetch(url);
  const body = (await response.json()) as { checks: Record<string, { status: string }> };
  return { status: response.status, llm: body.checks["llm-service"]?.status };
}

describe("e2e: LlmRestarts with one llm-service", () => {
  let sys: E2E;
  let sql: postgres.Sql;
  beforeAll(async () => {
    ({ sys, sql } = await boot(1));
  }, 240_000);
  afterAll(async () => {
    saveLogs(sys, "llm-restarts-1");
    await sql?.end();
    await sys?.stop();
  }, 90_000);

  it("kill -9 mid-stream, restart: the call is retried, viewers see one answer", async () => {
    const sessions = await watch(sys.stack.wsUrl, "sessions");
    const id = await submitAlert(sys, "Narrate");
    const channel = `session:${id}`;
    const live = await watch(sys.stack.wsUrl, channel);
    await streaming(live, channel);
    await sys.stack.process("llm-service-1").kill();
    // The runners' /ready names the cause while llm-service is gone.
    await until(async () => (await readyCheck(sys, "agent-runner-1")).llm === "failing", {
      what: "agent-runner /ready to report llm-service failing",
      timeoutMs: 10_000,
    });
    expect((await readyCheck(sys, "agent-runner-1")).status).toBe(503);
    await sleep(1_500);
    await sys.stack.start("llm-service");
    const { answerEventId, attempts } = await expectCompletedOnce(sys, sql, id, live, sessions);
    expect(attempts.Narrator).toBeGreaterThanOrEqual(2);
    // The viewer was told the partial text is void, and ends with the answer, once.
    expect(
      chunks(live, channel).filter((c) => c.event_id === answerEventId && c.reset),
    ).not.toEqual([]);
    await until(async () => shown(live, channel, answerEventId) === ANSWER, {
      what: "the streamed text to be the answer",
      timeoutMs: 10_000,
    });
    await until(async () => (await readyCheck(sys, "agent-runner-1")).status === 200, {
      what: "agent-runner ready again",
      timeoutMs: 10_000,
    });
    await live.close();
    await sessions.close();
  }, 240_000);

  it("kill -9 between calls: the next call waits for the restart", async () => {
    const sessions = await watch(sys.stack.wsUrl, "sessions");
    const id = await submitAlert(sys, "Narrate");
    const channel = `session:${id}`;
    const live = await watch(sys.stack.wsUrl, channel);
    // The agent's answer is complete: the executive summary call comes next.
    await live.waitFor(
      (f) =>
        "id" in f &&
        f.channel === channel &&
        f.payload.type === "timeline_event.completed" &&
        f.payload.event_type === "final_analysis",
      60_000,
    );
    await sys.stack.process("llm-service-2").kill();
    await sleep(2_000);
    await sys.stack.start("llm-service");
    const { attempts } = await expectCompletedOnce(sys, sql, id, live, sessions);
    expect(attempts.ExecSummaryAgent).toBeGreaterThanOrEqual(2);
    await live.close();
    await sessions.close();
  }, 240_000);
});

describe("e2e: LlmRestarts with two llm-service replicas", () => {
  let sys: E2E;
  let sql: postgres.Sql;
  beforeAll(async () => {
    ({ sys, sql } = await boot(2));
  }, 240_000);
  afterAll(async () => {
    saveLogs(sys, "llm-restarts-2");
    await sql?.end();
    await sys?.stop();
  }, 90_000);

  it("both replicas serve; the one streaming dies and the other finishes every session", async () => {
    const sessions = await watch(sys.stack.wsUrl, "sessions");
    const ids: string[] = [];
    const viewers: TestClient[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await submitAlert(sys, "Narrate");
      ids.push(id);
      viewers.push(await watch(sys.stack.wsUrl, `session:${id}`));
    }
    const first = ids[0] as string;
    const live = viewers[0] as TestClient;
    await streaming(live, `session:${first}`);
    const serving = ["llm-service-1", "llm-service-2"].find((name) =>
      sys.stack
        .process(name)
        .lines.some((l) => l.includes('"generate started"') && l.includes(first)),
    );
    expect(serving).toBeDefined();
    const served = (name: string) =>
      sys.stack.process(name).lines.filter((l) => l.includes('"generate started"')).length;
    await sys.stack.process(serving as string).kill();
    const results = [];
    for (const [i, id] of ids.entries()) {
      results.push(await expectCompletedOnce(sys, sql, id, viewers[i] as TestClient, sessions));
    }
    expect(results[0]?.attempts.Narrator).toBeGreaterThanOrEqual(2);
    // Both replicas got calls (round-robin), the dead one only until it died.
    expect(served("llm-service-1")).toBeGreaterThan(0);
    expect(served("llm-service-2")).toBeGreaterThan(0);
    for (const viewer of viewers) await viewer.close();
    await sessions.close();
  }, 300_000);
});
