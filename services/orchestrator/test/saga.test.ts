import { sessionEventsSubject, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { listSessionStages } from "@tarsy/db";
import { createMetrics } from "@tarsy/metrics";
import { describe, expect } from "vitest";
import type { SagaDeps } from "../src/saga/deps.ts";
import { sagaMetrics } from "../src/saga/metrics.ts";
import { withSession } from "../src/saga/session-lock.ts";
import {
  stackTest as it,
  logger,
  outboxPublished,
  runnerPeer,
  startTestOrchestrator,
  submit,
  testConfig,
  waitForSession,
} from "./harness.ts";

const CONFIG = `
defaults:
  llm_provider: scripted-test
  llm_backend: scripted
  alert_type: test-alert
queue:
  max_concurrent_sessions: 5
  session_timeout: 30s
  chat_timeout: 10s
agents:
  Investigator: { custom_instructions: "Investigate." }
  LogAgent: { custom_instructions: "Read logs." }
  MetricsAgent: { custom_instructions: "Read metrics." }
agent_chains:
  three-stage:
    alert_types: [test-alert]
    chat: { enabled: true }
    stages:
      - name: triage
        agents: [{ name: Investigator }]
      - name: deep-dive
        agents: [{ name: LogAgent }, { name: MetricsAgent }]
      - name: verify
        agents: [{ name: Investigator }]
        replicas: 2
  strict:
    alert_types: [strict-alert]
    stages:
      - name: both-must-pass
        success_policy: all
        agents: [{ name: LogAgent }, { name: MetricsAgent }]
      - name: never-runs
        agents: [{ name: Investigator }]
`;

interface Readable {
  get(): Promise<{
    values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
  }>;
}

/** Sum of a metric's values with these labels (`series`: e.g. a histogram's `_count`). */
async function value(metric: Readable, labels: Record<string, string>, series?: string) {
  const { values } = await metric.get();
  return values
    .filter((v) => series === undefined || v.metricName === series)
    .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((n, v) => n + v.value, 0);
}

describe("orchestrator saga (real Postgres and NATS)", () => {
  it("runs a three-stage chain with a parallel stage, replicas, synthesis and summary in order", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const config = testConfig(CONFIG);
    const peer = await runnerPeer(nats.bus, (r) => ({
      status: "completed",
      analysis:
        r.kind === "executive_summary"
          ? "SUMMARY: payments pods crash on OOM"
          : `${r.agent_name}@${r.stage_id?.slice(0, 4) ?? "session"} found the cause`,
    }));
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config));
    const id = await submit(t.db);
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("completed");

    const stages = await listSessionStages(t.db.prisma, id);
    expect(stages.map((s) => [s.stageIndex, s.stageName, s.kind, s.status])).toEqual([
      [1, "triage", "investigation", "completed"],
      [2, "deep-dive", "investigation", "completed"],
      [3, "deep-dive - Synthesis", "synthesis", "completed"],
      [4, "verify", "investigation", "completed"],
      [5, "verify - Synthesis", "synthesis", "completed"],
    ]);
    expect(stages[1]?.parallelType).toBe("multi_agent");
    expect(stages[3]?.parallelType).toBe("replica");
    expect(stages[3]?.executions.map((e) => e.agentName)).toEqual([
      "Investigator-1",
      "Investigator-2",
    ]);
    expect(stages[2]?.executions.map((e) => e.agentName)).toEqual(["SynthesisAgent"]);

    // Request order and the context each stage got.
    const byStage = (name: string) =>
      peer.requests.filter((r) => stages.find((s) => s.id === r.stage_id)?.stageName === name);
    const order = peer.requests.map(
      (r) => stages.find((s) => s.id === r.stage_id)?.stageName ?? r.kind,
    );
    expect(order).toEqual([
      "triage",
      "deep-dive",
      "deep-dive",
      "deep-dive - Synthesis",
      "verify",
      "verify",
      "verify - Synthesis",
      "executive_summary",
    ]);
    expect(byStage("triage")[0]?.context).toBeUndefined();
    const triageResult = stages[0]?.executions[0]?.finalAnalysis ?? "";
    for (const r of byStage("deep-dive")) {
      expect(r.context).toContain("<!-- CHAIN_CONTEXT_START -->");
      expect(r.context).toContain(triageResult);
    }
    const synthesisContext = byStage("deep-dive - Synthesis")[0]?.context ?? "";
    expect(synthesisContext).toContain("LogAgent");
    expect(synthesisContext).toContain("MetricsAgent");
    const synthesisResult = stages[2]?.executions[0]?.finalAnalysis ?? "";
    const verifyContext = byStage("verify")[0]?.context ?? "";
    expect(verifyContext).toContain(synthesisResult);
    expect(verifyContext).not.toContain(stages[1]?.executions[0]?.finalAnalysis ?? "?");

    // Final analysis from the last stage (its synthesis), then the executive summary.
    const finalSynthesis = stages[4]?.executions[0]?.finalAnalysis;
    expect(done.finalAnalysis).toBe(finalSynthesis);
    expect(peer.requests.at(-1)?.context).toBe(finalSynthesis);
    expect(done.executiveSummary).toBe("SUMMARY: payments pods crash on OOM");
    expect(done.totalTokens).toBe(15 * 8);

    // The session channel tells the same story, in order.
    await outboxPublished(t.db);
    const replay = await nats.bus.replayEvents({
      subject: sessionEventsSubject(id),
      afterSeq: 0,
      limit: 500,
    });
    const story = replay.events.map((e) =>
      e.payload.type === "stage.status"
        ? `${e.payload.stage_name}:${e.payload.status}`
        : e.payload.type === "session.status"
          ? `session:${e.payload.status}`
          : e.payload.type,
    );
    expect(story.filter((s) => s.startsWith("session:")).at(-1)).toBe("session:completed");
    expect(story.filter((s) => !s.startsWith("session:"))).toEqual([
      "triage:started",
      "triage:completed",
      "deep-dive:started",
      "deep-dive:completed",
      "deep-dive - Synthesis:started",
      "deep-dive - Synthesis:completed",
      "verify:started",
      "verify:completed",
      "verify - Synthesis:started",
      "verify - Synthesis:completed",
      // The session's end puts it in the team's review queue.
      "review.status",
    ]);
  });

  it("policy any: one failing agent of a parallel stage does not stop the chain", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const config = testConfig(CONFIG);
    const peer = await runnerPeer(nats.bus, (r) =>
      r.agent_name === "MetricsAgent"
        ? { status: "failed", error: "metrics backend unreachable" }
        : { status: "completed", analysis: `${r.agent_name} ok` },
    );
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config));
    const id = await submit(t.db);
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("completed");
    const synthesis = peer.requests.find((r) => r.kind === "synthesis");
    expect(synthesis?.context).toMatch(
      /MetricsAgent[\s\S]*Status: failed[\s\S]*metrics backend unreachable/,
    );
  });

  it("policy all: a failing agent fails the session fast and no later stage runs", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const config = testConfig(CONFIG);
    const peer = await runnerPeer(nats.bus, (r) =>
      r.agent_name === "LogAgent"
        ? { status: "failed", error: "log store timeout" }
        : { status: "completed", analysis: "fine" },
    );
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config));
    const id = await submit(t.db, "strict-alert", "strict");
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("failed");
    expect(done.errorMessage).toContain('stage "both-must-pass" failed');
    expect(done.errorMessage).toContain("LogAgent: failed: log store timeout");
    const stages = await listSessionStages(t.db.prisma, id);
    expect(stages.map((s) => s.stageName)).toEqual(["both-must-pass"]);
    expect(
      peer.requests.some((r) => r.kind === "synthesis" || r.kind === "executive_summary"),
    ).toBe(false);
  });

  it("a failed executive summary still completes the session, keeping the reason", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const config = testConfig(CONFIG);
    const peer = await runnerPeer(nats.bus, (r) =>
      r.kind === "executive_summary"
        ? { status: "failed", error: "summary model overloaded" }
        : { status: "completed", analysis: `${r.agent_name} done` },
    );
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config));
    const id = await submit(t.db);
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("completed");
    expect(done.executiveSummary).toBeNull();
    expect(done.executiveSummaryError).toBe("summary model overloaded");
    expect(done.finalAnalysis).toBe("SynthesisAgent done");
  });

  it("drops a submission whose session was withdrawn, without dead-lettering it", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const config = testConfig(CONFIG);
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config));
    const ghost = "00000000-0000-4000-8000-000000000001";
    await nats.bus.publish("sessionSubmitted", {
      v: 1,
      session_id: ghost,
      alert_type: "test-alert",
      chain_id: "three-stage",
      submitted_at: new Date().toISOString(),
    });
    const id = await submit(t.db);
    const peer = await runnerPeer(nats.bus, () => ({ status: "completed", analysis: "ok" }));
    await waitForSession(t.db, id, ["completed"]);
    await peer.stop();
    const letters = (await nats.admin.listDeadLetters()).items;
    expect(letters.map((l) => l.letter.error)).toEqual([]);
  });

  it("counts a failed session, its duration and its failed stage", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const metrics = createMetrics("orchestrator", { processMetrics: false });
    const peer = await runnerPeer(nats.bus, (r) =>
      r.agent_name === "LogAgent"
        ? { status: "failed", error: "log store timeout" }
        : { status: "completed", analysis: "fine" },
    );
    orchestrators.push(
      await startTestOrchestrator(t.db, nats.bus, testConfig(CONFIG), "orch-m", metrics),
    );
    const id = await submit(t.db, "strict-alert", "strict");
    await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(await value(metrics.sessions, { status: "failed" })).toBe(1);
    expect(await value(metrics.sessions, { status: "completed" })).toBe(0);
    expect(
      await value(
        metrics.sessionDuration,
        { status: "failed" },
        "tarsy_session_duration_seconds_count",
      ),
    ).toBe(1);
    expect(
      await value(
        metrics.stageDuration,
        { status: "failed" },
        "tarsy_stage_duration_seconds_count",
      ),
    ).toBe(1);
    expect(
      await value(
        metrics.stageDuration,
        { status: "completed" },
        "tarsy_stage_duration_seconds_count",
      ),
    ).toBe(0);
  });

  it("records a step's metrics only once its transaction committed", async ({ t }) => {
    const metrics = createMetrics("orchestrator", { processMetrics: false });
    const deps = {
      db: t.db.prisma,
      logger,
      now: () => new Date(),
      metrics: sagaMetrics(metrics),
    } as unknown as SagaDeps;
    const id = await submit(t.db);
    const cancelled = () => value(metrics.sessions, { status: "cancelled" });
    await expect(
      withSession(deps, id, async (_tx, session, locked) => {
        locked.metrics.sessionEnded(session, "cancelled", new Date());
        throw new Error("the commit failed");
      }),
    ).rejects.toThrow("the commit failed");
    expect(await cancelled()).toBe(0);
    await withSession(deps, id, async (_tx, session, locked) => {
      locked.metrics.sessionEnded(session, "cancelled", new Date());
      expect(await cancelled()).toBe(0); // not before the commit
    });
    expect(await cancelled()).toBe(1);
  });
});
