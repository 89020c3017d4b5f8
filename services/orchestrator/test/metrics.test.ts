import { createMetrics } from "@tarsy/metrics";
import { createTestBus, createTestDb, type TestBus, type TestDb } from "@tarsy/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SagaDeps } from "../src/saga/deps.ts";
import { sagaMetrics } from "../src/saga/metrics.ts";
import { withSession } from "../src/saga/session-lock.ts";
import {
  logger,
  type Orchestrator,
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
  alert_type: strict-alert
agents:
  LogAgent: { custom_instructions: "Read logs." }
  MetricsAgent: { custom_instructions: "Read metrics." }
agent_chains:
  strict:
    alert_types: [strict-alert]
    stages:
      - name: both-must-pass
        success_policy: all
        agents: [{ name: LogAgent }, { name: MetricsAgent }]
      - name: never-runs
        agents: [{ name: LogAgent }]
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

describe("orchestrator metrics (real Postgres and NATS)", () => {
  let t: TestDb;
  let nats: TestBus;
  let orchestrator: Orchestrator | undefined;
  beforeEach(async () => {
    [t, nats] = await Promise.all([createTestDb(), createTestBus()]);
  });
  afterEach(async () => {
    await orchestrator?.stop();
    orchestrator = undefined;
    await nats.cleanup();
    await t.cleanup();
  });

  it("counts a failed session, its duration and its failed stage", async () => {
    const metrics = createMetrics("orchestrator", { processMetrics: false });
    const peer = await runnerPeer(nats.bus, (r) =>
      r.agent_name === "LogAgent"
        ? { status: "failed", error: "log store timeout" }
        : { status: "completed", analysis: "fine" },
    );
    orchestrator = await startTestOrchestrator(
      t.db,
      nats.bus,
      testConfig(CONFIG),
      "orch-m",
      metrics,
    );
    const id = await submit(t.db, "strict-alert", "strict");
    await waitForSession(t.db, id, ["completed", "failed"]);
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

  it("records a step's metrics only once its transaction committed", async () => {
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
