import { resolve } from "node:path";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  announcedStatuses,
  detail,
  REPLICAS_DIR,
  saveLogs,
  submitAlert,
  timeline,
  waitStatus,
} from "./scenario-support.ts";
import { bootSystem, DEMO_ALERT, type E2E } from "./support.ts";

/**
 * MultiReplica and CrashRecovery share one stack with two of every service
 * (testdata/replicas: the demo chain with a slowed-down script).
 */
let sys: E2E;
let sql: postgres.Sql;

beforeAll(async () => {
  sys = await bootSystem({
    configDir: REPLICAS_DIR,
    llmScriptPath: resolve(REPLICAS_DIR, "llm-script.yaml"),
    // debug: the gateways log which execution they opened (to kill the one serving it).
    logLevel: "debug",
    replicas: {
      "ingest-api": 2,
      "stream-relay": 2,
      orchestrator: 2,
      "mcp-gateway": 2,
      "agent-runner": 2,
    },
  });
  sql = postgres(sys.database.url, { max: 2, onnotice: () => {} });
}, 240_000);

afterAll(async () => {
  saveLogs(sys, "replicas");
  await sql?.end();
  await sys?.stop();
}, 90_000);

async function subscribed(url: string, channels: string[]): Promise<TestClient> {
  const client = await connectClient(url);
  for (const channel of channels) {
    client.send({ action: "subscribe", channel });
    await client.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);
  }
  return client;
}

/** Event ids a client received on one channel, in arrival order. */
function channelIds(client: TestClient, channel: string): number[] {
  return client.frames.flatMap((f) => ("id" in f && f.channel === channel ? [f.id] : []));
}

function createdEventIds(client: TestClient, channel: string): string[] {
  return client.frames.flatMap((f) =>
    "id" in f && f.channel === channel && f.payload.type === "timeline_event.created"
      ? [f.payload.event_id]
      : [],
  );
}

function expectStrictlyIncreasing(ids: number[]) {
  for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1] as number);
}

describe("e2e: MultiReplica", () => {
  it("a session submitted on ingest A is watched on relay B: every event once, in order", async () => {
    const [apiA, apiB] = sys.stack.apiUrls;
    const [wsA, wsB] = sys.stack.wsUrls;
    expect(apiB).toBeDefined();
    const onB = await subscribed(wsB as string, ["sessions"]);
    const id = await submitAlert(sys, DEMO_ALERT.alert_type, DEMO_ALERT.data, apiA);
    const channel = `session:${id}`;
    onB.send({ action: "subscribe", channel });
    await onB.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);
    // Ingest B serves the session submitted on A.
    const viaB = await fetch(`${apiB}/api/v1/sessions/${id}`);
    expect(viaB.status).toBe(200);
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 150_000);
    expect(done.status).toBe("completed");
    expect(done.executive_summary).toContain("JVM heap exceeds");
    await onB.waitFor(
      (f) =>
        "id" in f &&
        f.channel === "sessions" &&
        f.payload.type === "session.status" &&
        f.payload.session_id === id &&
        f.payload.status === "completed",
      10_000,
    );
    // A late client on relay A replays the same events: the same ids in the same order. (An
    // event may still follow the completion, so both are read once they agree.)
    const onA = await subscribed(wsA as string, [channel]);
    await until(
      async () =>
        JSON.stringify(channelIds(onA, channel)) === JSON.stringify(channelIds(onB, channel)),
      { what: "relay A's replay to match what relay B delivered live", timeoutMs: 10_000 },
    ).catch(() => undefined);
    const ids = channelIds(onB, channel);
    expectStrictlyIncreasing(ids);
    expect(channelIds(onA, channel)).toEqual(ids);
    // Every timeline event of the API was announced exactly once on B.
    const events = await timeline(sys, id);
    const created = createdEventIds(onB, channel);
    expect(new Set(created).size).toBe(created.length);
    expect(new Set(created)).toEqual(new Set(events.map((e) => e.id)));
    // Work done by both runners (whichever took each execution) reached the client on B.
    const runners = await sql<{ runner_id: string | null }[]>`
      SELECT runner_id FROM agent_executions WHERE session_id = ${id}`;
    expect(runners.length).toBe(5);
    expect(runners.every((r) => r.runner_id !== null)).toBe(true);
    // The sessions channel on B: unique ids, in order; started once admitted, completed once.
    expectStrictlyIncreasing(channelIds(onB, "sessions"));
    const statuses = announcedStatuses(onB, id);
    expect(statuses[0]).toBe("in_progress");
    expect(statuses.filter((s) => s === "completed")).toEqual(["completed"]);
    expect(statuses.at(-1)).toBe("completed");
    await onA.close();
    await onB.close();
  }, 200_000);
});

describe("e2e: CrashRecovery", () => {
  it("survives kill -9 of a runner, an orchestrator and a gateway mid-investigation", async () => {
    const [wsA, wsB] = sys.stack.wsUrls as [string, string];
    const reference = await subscribed(wsA, ["sessions"]);
    const id = await submitAlert(sys, DEMO_ALERT.alert_type, DEMO_ALERT.data);
    const channel = `session:${id}`;
    reference.send({ action: "subscribe", channel });
    await reference.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);
    const watcher = await subscribed(wsB, [channel]);

    // 1. kill -9 the runner running triage while its first LLM call is in flight.
    const triage = await until(
      async () => {
        const [row] = await sql<{ runner_id: string | null; status: string }[]>`
          SELECT e.runner_id, e.status FROM agent_executions e
          JOIN stages s ON s.id = e.stage_id
          WHERE e.session_id = ${id} AND s.stage_name = 'triage'`;
        return row?.status === "active" && row.runner_id ? row : null;
      },
      { what: "triage to run", timeoutMs: 60_000 },
    );
    const runnerName = `agent-runner-${triage.runner_id?.split("-").at(-1)}`;
    await sys.stack.process(runnerName).kill();
    await sys.stack.start("agent-runner");

    // The watcher drops its connection; events go on without it.
    const lastSeen = channelIds(watcher, channel).at(-1) ?? 0;
    const before = channelIds(watcher, channel);
    await watcher.close();

    // 2. kill -9 an orchestrator once the deep-dive stage has started.
    await until(
      async () => {
        const rows = await sql`
          SELECT 1 FROM stages WHERE session_id = ${id} AND stage_name = 'deep-dive'`;
        return rows.length > 0;
      },
      { what: "the deep-dive stage", timeoutMs: 120_000 },
    );
    await sys.stack.process("orchestrator-1").kill();
    await sys.stack.start("orchestrator");

    // 3. kill -9 a gateway while the deep-dive agents are between tool calls.
    const logAgent = await until(
      async () => {
        const [row] = await sql<{ execution_id: string }[]>`
          SELECT m.execution_id FROM mcp_interactions m
          JOIN agent_executions e ON e.id = m.execution_id
          WHERE e.session_id = ${id} AND e.agent_name = 'LogAgent' AND m.interaction_type = 'tool_call'`;
        return row;
      },
      { what: "LogAgent's first tool call", timeoutMs: 60_000 },
    );
    const gateway =
      ["mcp-gateway-1", "mcp-gateway-2"].find((name) =>
        sys.stack
          .process(name)
          .lines.some((l) => l.includes("execution opened") && l.includes(logAgent.execution_id)),
      ) ?? "mcp-gateway-1";
    await sys.stack.process(gateway).kill();
    await sys.stack.start("mcp-gateway");

    // The watcher comes back (to the other relay) and catches up from the last id it saw.
    const back = await connectClient(wsA);
    back.send({ action: "catchup", channel, last_event_id: lastSeen });
    await back.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);

    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 240_000);
    expect(done.status).toBe("completed");
    expect(done.stages.map((s) => [s.stage_name, s.status])).toEqual([
      ["triage", "completed"],
      ["deep-dive", "completed"],
      ["deep-dive - Synthesis", "completed"],
    ]);
    expect(done.executive_summary).toContain("JVM heap exceeds");

    // The session completed exactly once on the sessions channel.
    await reference.waitFor(
      (f) =>
        "id" in f &&
        f.channel === "sessions" &&
        f.payload.type === "session.status" &&
        f.payload.session_id === id &&
        f.payload.status === "completed",
      15_000,
    );
    const statuses = announcedStatuses(reference, id);
    expect(statuses.filter((s) => s === "completed")).toHaveLength(1);

    // Timeline: unique sequence numbers; the triage restarted on another runner.
    const events = await timeline(sys, id);
    const seqs = events.map((e) => e.sequence_number);
    expect(new Set(seqs).size).toBe(seqs.length);
    const attempts = await sql<{ attempt: number; runner_id: string }[]>`
      SELECT e.attempt, e.runner_id FROM agent_executions e JOIN stages s ON s.id = e.stage_id
      WHERE e.session_id = ${id} AND s.stage_name = 'triage'`;
    expect(attempts[0]?.attempt).toBeGreaterThanOrEqual(2);
    expect(attempts[0]?.runner_id).not.toBe(triage.runner_id);

    // The reconnected watcher: what it saw before plus its catch-up is exactly the reference.
    const refIds = channelIds(reference, channel);
    expectStrictlyIncreasing(refIds);
    await until(async () => channelIds(back, channel).at(-1) === refIds.at(-1), {
      what: "the reconnected watcher to catch up",
      timeoutMs: 15_000,
    });
    expect([...before, ...channelIds(back, channel)]).toEqual(refIds);
    const created = createdEventIds(reference, channel);
    expect(new Set(created).size).toBe(created.length);
    expect(new Set(created)).toEqual(new Set(events.map((e) => e.id)));
    await back.close();
    await reference.close();
    const final = await detail(sys, id);
    expect(final.status).toBe("completed");
  }, 420_000);
});
