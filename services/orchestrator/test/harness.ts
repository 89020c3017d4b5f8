import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Bus, WorkConsumer } from "@tarsy/bus";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import type { ExecutionFinished, ExecutionRequested } from "@tarsy/contracts";
import { createSession, createTimelineEvent, type Db, getSession } from "@tarsy/db";
import { countStoredRows } from "@tarsy/db/testing";
import { createMetrics, type ServiceMetrics } from "@tarsy/metrics";
import { createLogger, type Logger } from "@tarsy/runtime";
import {
  createTestBus,
  createTestDb,
  natsTest,
  type TestBus,
  type TestDb,
  until,
} from "@tarsy/testkit";
import {
  type Orchestrator,
  type OrchestratorMetricSet,
  startOrchestrator,
} from "../src/orchestrator.ts";

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

/** What shapes a one-agent chain `simple` of the scripted provider; the rest is fixed. */
export interface SimpleChainOptions {
  /** The `queue:` settings, e.g. `{ session_timeout: "60s" }`. */
  queue: Record<string, string | number>;
  /** The alert types the chain serves; the first is the default alert type. */
  alertTypes?: string[];
  /** The chain's stages, each run by the one Investigator agent. */
  stages?: string[];
  /** Whether the chain offers follow-up chat. */
  chat?: boolean;
}

/** The config most saga tests run: the Investigator agent in the stages of chain `simple`. */
export function simpleChainConfig({
  queue,
  alertTypes = ["test-alert"],
  stages = ["investigate"],
  chat = false,
}: SimpleChainOptions): TarsyConfig {
  const queueLines = Object.entries(queue).map(([key, value]) => `  ${key}: ${value}`);
  const stageLines = stages.map(
    (name) => `      - name: ${name}\n        agents: [{ name: Investigator }]`,
  );
  return testConfig(`
defaults:
  llm_provider: scripted-test
  llm_backend: scripted
  alert_type: ${alertTypes[0]}
queue:
${queueLines.join("\n")}
agents:
  Investigator: { custom_instructions: "Investigate." }
agent_chains:
  simple:
    alert_types: [${alertTypes.join(", ")}]
${chat ? "    chat: { enabled: true }\n" : ""}    stages:
${stageLines.join("\n")}
`);
}

export function startTestOrchestrator(
  db: Db,
  bus: Bus,
  config: TarsyConfig,
  podId = "orch-a",
  metrics?: OrchestratorMetricSet,
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

/**
 * `it` with a database (`t`), a bus (`nats`) and a list to put started orchestrators in, all
 * the test's own: the orchestrators are stopped after the test, then the bus and the database.
 */
export const stackTest = natsTest
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  .extend("t", async ({}, { onCleanup }) => {
    const t = await createTestDb();
    onCleanup(() => t.cleanup());
    return t;
  })
  // Depends on the database and the bus so that it is torn down before them.
  .extend("orchestrators", async ({ t: _t, nats: _nats }, { onCleanup }) => {
    const orchestrators: Orchestrator[] = [];
    onCleanup(async () => {
      for (const orchestrator of orchestrators.splice(0)) await orchestrator.stop();
    });
    return orchestrators;
  });

/** A stack that a file's tests share, started by {@link startSharedStack}. */
export interface SharedStack<Line> {
  t: TestDb;
  nats: TestBus;
  /** The orchestrator's log lines at the level asked for and above, parsed. */
  lines: Line[];
  metrics: ServiceMetrics<"orchestrator">;
  /** Stops the runner peer and the orchestrator, then drops the bus and the database. */
  stop(): Promise<void>;
}

/**
 * A database, a bus, one orchestrator (`orch-a`) whose metrics can be read and whose log lines
 * at `level` and above are kept, and a runner peer that completes every execution with
 * "root cause" (written to the timeline, as a runner does).
 */
export async function startSharedStack<Line>(
  config: TarsyConfig,
  level: "warn" | "error",
): Promise<SharedStack<Line>> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const next of stops.splice(0).reverse()) await next();
  };
  try {
    const [t, nats] = await Promise.all([createTestDb(), createTestBus()]);
    stops.push(
      () => t.cleanup(),
      () => nats.cleanup(),
    );
    const lines: Line[] = [];
    const metrics = createMetrics("orchestrator", { processMetrics: false });
    const log = createLogger({
      service: "orchestrator",
      level,
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
    });
    const orchestrator = await startTestOrchestrator(
      t.db,
      nats.bus,
      config,
      "orch-a",
      metrics,
      log,
    );
    stops.push(() => orchestrator.stop());
    const peer = await runnerPeer(
      nats.bus,
      () => ({ status: "completed", analysis: "root cause" }),
      t.db,
    );
    stops.push(() => peer.stop());
    return { t, nats, lines, metrics, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const now = () => new Date().toISOString();

/** A due time long past. */
export const PAST = "2020-01-01T00:00:00.000Z";

/**
 * A valid message of each kind the orchestrator consumes, as a plain object to publish raw.
 * Its ids are fresh (they name nothing that exists) unless `over` gives others; a field set to
 * `undefined` in `over` is left out of the JSON.
 */
export const workMessages = {
  sessionSubmitted: (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    session_id: randomUUID(),
    alert_type: "test-alert",
    chain_id: "simple",
    submitted_at: now(),
    ...over,
  }),
  chatSubmitted: (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    session_id: randomUUID(),
    chat_id: randomUUID(),
    message_id: randomUUID(),
    submitted_at: now(),
    ...over,
  }),
  cancelRequested: (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    session_id: randomUUID(),
    requested_by: "tester",
    requested_at: now(),
    ...over,
  }),
  /** A chat turn's deadline, due. */
  deadline: (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    session_id: randomUUID(),
    scope: "chat",
    stage_id: randomUUID(),
    deadline_at: PAST,
    ...over,
  }),
  /** An investigation that completed. */
  executionFinished: (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    session_id: randomUUID(),
    stage_id: randomUUID(),
    execution_id: randomUUID(),
    kind: "investigation",
    status: "completed",
    final_analysis: "x",
    error: null,
    token_usage: null,
    finished_at: now(),
    ...over,
  }),
};

export async function submit(db: Db, alertType = "test-alert", chainId = "three-stage") {
  const { session } = await createSession(db.prisma, {
    project: "default",
    alertData: '{"alert":"PodCrashLooping","namespace":"payments"}',
    alertType,
    chainId,
    author: "tester",
  });
  return session.id;
}

export async function waitForSession(
  db: Db,
  id: string,
  statuses: readonly string[],
  timeoutMs = 15_000,
) {
  return until(
    async () => {
      const s = await getSession(db.prisma, id);
      return s && statuses.includes(s.status) ? s : null;
    },
    { what: `session ${id} to be ${statuses.join("|")}`, timeoutMs },
  );
}

/**
 * Waits until every outbox row of the test's database is published: a status the database
 * shows reaches the events stream after its transaction committed, a moment later.
 */
export async function outboxPublished(db: Db): Promise<void> {
  await until(async () => (await countStoredRows(db.prisma)).unpublishedOutbox === 0, {
    what: "the outbox to be published",
    timeoutMs: 15_000,
  });
}

export type { Orchestrator };
