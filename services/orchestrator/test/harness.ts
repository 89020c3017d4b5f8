import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Bus, WorkConsumer } from "@tarsy/bus";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import type { ExecutionFinished, ExecutionRequested } from "@tarsy/contracts";
import { createSession, createTimelineEvent, type Db } from "@tarsy/db";
import { createLogger, type Logger } from "@tarsy/runtime";
import { type Orchestrator, startOrchestrator } from "../src/orchestrator.ts";
import type { SagaMetricSet } from "../src/saga/metrics.ts";

export const logger = createLogger({
  service: "test",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

export const PROVIDERS_YAML = `
llm_providers:
  scripted-test:
    type: scripted
    model: scripted
`;

export function testConfig(tarsyYaml: string): TarsyConfig {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-orch-"));
  writeFileSync(join(dir, "tarsy.yaml"), tarsyYaml);
  writeFileSync(join(dir, "llm-providers.yaml"), PROVIDERS_YAML);
  return loadConfig({ configDir: dir, env: {} }).config;
}

export function startTestOrchestrator(
  db: Db,
  bus: Bus,
  config: TarsyConfig,
  podId = "orch-a",
  metrics?: SagaMetricSet,
  log: Logger = logger,
) {
  return startOrchestrator(
    { db: db.prisma, bus, config, logger: log, ...(metrics ? { metrics } : {}) },
    {
      podId,
      concurrency: 4,
      sweepIntervalMs: 200,
      staleAfterMs: 60_000,
      outboxIntervalMs: 50,
      consume: { backoff: { initialMs: 50, maxMs: 500 }, fetchExpiresMs: 1_000 },
    },
  );
}

export type Outcome =
  | { status: "completed"; analysis: string }
  | { status: "failed" | "cancelled" | "timed_out"; error: string }
  | "hold";

/**
 * The runner's side of the protocol, played by the test: takes execution requests from the
 * work stream like a runner and answers with `executionFinished` as the script says.
 */
export async function runnerPeer(
  bus: Bus,
  script: (request: ExecutionRequested) => Outcome,
  /** When given, a completed answer is also written to the timeline, as a runner does. */
  db?: Db,
) {
  const requests: ExecutionRequested[] = [];
  const held: ExecutionRequested[] = [];
  const finish = async (request: ExecutionRequested, outcome: Exclude<Outcome, "hold">) => {
    if (db && outcome.status === "completed") {
      await createTimelineEvent(db.prisma, {
        sessionId: request.session_id,
        stageId: request.stage_id,
        executionId: request.execution_id,
        eventType: request.kind === "executive_summary" ? "executive_summary" : "final_analysis",
        status: "completed",
        content: outcome.analysis,
      });
    }
    const finished: ExecutionFinished = {
      v: 1,
      session_id: request.session_id,
      stage_id: request.stage_id,
      execution_id: request.execution_id,
      kind: request.kind,
      status: outcome.status,
      final_analysis: outcome.status === "completed" ? outcome.analysis : null,
      error: outcome.status === "completed" ? null : outcome.error,
      token_usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      finished_at: new Date().toISOString(),
    };
    await bus.publish("executionFinished", finished);
  };
  const consumer: WorkConsumer = await bus.consume(
    "runner",
    {
      async executionRequested(request) {
        requests.push(request);
        const outcome = script(request);
        if (outcome === "hold") held.push(request);
        else await finish(request, outcome);
      },
    },
    { concurrency: 8 },
  );
  return {
    requests,
    held,
    /** Answers every held request (now) with the given outcome function. */
    async release(outcome: (r: ExecutionRequested) => Exclude<Outcome, "hold">) {
      const pending = held.splice(0);
      for (const request of pending) await finish(request, outcome(request));
    },
    /** Answers the oldest held request (now) with the given outcome; false when none is held. */
    async releaseOldest(outcome: (r: ExecutionRequested) => Exclude<Outcome, "hold">) {
      const request = held.shift();
      if (request) await finish(request, outcome(request));
      return request !== undefined;
    },
    stop: () => consumer.stop(),
  };
}

export async function submit(db: Db, alertType = "test-alert", chainId = "three-stage") {
  const { session } = await createSession(db.prisma, {
    alertData: '{"alert":"PodCrashLooping","namespace":"payments"}',
    alertType,
    chainId,
    author: "tester",
  });
  return session.id;
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function waitForSession(db: Db, id: string, statuses: string[], timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const s = await db.prisma.alertSession.findUnique({ where: { id } });
      return s && statuses.includes(s.status) ? s : null;
    },
    timeoutMs,
    `session ${id} to be ${statuses.join("|")}`,
  );
}

export type { Orchestrator };
