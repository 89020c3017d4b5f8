import { randomUUID } from "node:crypto";
import type { PayloadOf } from "@tarsy/contracts";
import { createMetrics } from "@tarsy/metrics";
import { createLogger } from "@tarsy/runtime";
import { createTestBus, createTestDb, type TestBus, type TestDb } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Orchestrator } from "../src/orchestrator.ts";
import {
  runnerPeer,
  startTestOrchestrator,
  submit,
  testConfig,
  waitFor,
  waitForSession,
} from "./harness.ts";

const config = testConfig(`
defaults:
  llm_provider: scripted-test
  llm_backend: scripted
  alert_type: test-alert
queue:
  max_concurrent_sessions: 2
  session_timeout: 10m
agents:
  Investigator: { custom_instructions: "Investigate." }
agent_chains:
  simple:
    alert_types: [test-alert]
    chat: { enabled: true }
    stages:
      - name: investigate
        agents: [{ name: Investigator }]
`);

interface Line {
  level: number;
  msg: string;
  subject?: string;
  kind?: string;
  missing?: string;
  missing_id?: string;
}

describe("work messages naming missing things (real Postgres and NATS)", () => {
  let t: TestDb;
  let nats: TestBus;
  let orchestrator: Orchestrator;
  let peer: Awaited<ReturnType<typeof runnerPeer>>;
  const lines: Line[] = [];
  const metrics = createMetrics("orchestrator", { processMetrics: false });
  let done: { sessionId: string; stageId: string; executionId: string };

  beforeAll(async () => {
    [t, nats] = await Promise.all([createTestDb(), createTestBus()]);
    const logger = createLogger({
      service: "orchestrator",
      level: "warn",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
    });
    orchestrator = await startTestOrchestrator(t.db, nats.bus, config, "orch-a", metrics, logger);
    peer = await runnerPeer(
      nats.bus,
      () => ({ status: "completed", analysis: "root cause" }),
      t.db,
    );
    const sessionId = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, sessionId, ["completed"]);
    const execution = await t.db.prisma.agentExecution.findFirstOrThrow({
      where: { sessionId, kind: "investigation" },
    });
    done = { sessionId, stageId: execution.stageId ?? "", executionId: execution.id };
    // All that stays in the backlog: the finished session's deadline check, due in 10 minutes.
    await waitFor(
      async () => (await nats.bus.workBacklog("orchestrator")) === 1,
      10_000,
      "the session's work to settle",
    );
  });
  afterAll(async () => {
    await peer?.stop();
    await orchestrator?.stop();
    await nats?.cleanup();
    await t?.cleanup();
  });

  const orphaned = async (kind: string, missing: string) =>
    (await metrics.workOrphaned.get()).values.find(
      (v) => v.labels.kind === kind && v.labels.missing === missing,
    )?.value ?? 0;

  const now = () => new Date().toISOString();
  const finished = (over: Partial<PayloadOf<"executionFinished">>) => ({
    v: 1 as const,
    session_id: randomUUID(),
    stage_id: null,
    execution_id: randomUUID(),
    kind: "investigation" as const,
    status: "completed" as const,
    final_analysis: "x",
    error: null,
    token_usage: null,
    finished_at: now(),
    ...over,
  });

  const cases: {
    name: string;
    kind: string;
    missing: string;
    payload: () => { payload: unknown; missingId: string };
  }[] = [
    {
      name: "session submitted for an unknown session",
      kind: "session_submitted",
      missing: "session",
      payload: () => {
        const id = randomUUID();
        const p = {
          v: 1,
          session_id: id,
          alert_type: "test-alert",
          chain_id: "simple",
          submitted_at: now(),
        };
        return { payload: p, missingId: id };
      },
    },
    {
      name: "execution finished for an unknown session",
      kind: "execution_finished",
      missing: "session",
      payload: () => {
        const p = finished({});
        return { payload: p, missingId: p.session_id };
      },
    },
    {
      name: "execution finished for an unknown execution of a real session",
      kind: "execution_finished",
      missing: "execution",
      payload: () => {
        const p = finished({ session_id: done.sessionId, stage_id: done.stageId });
        return { payload: p, missingId: p.execution_id };
      },
    },
    {
      name: "execution finished naming a stage the execution is not in",
      kind: "execution_finished",
      missing: "stage",
      payload: () => {
        const stage = randomUUID();
        const p = finished({
          session_id: done.sessionId,
          execution_id: done.executionId,
          stage_id: stage,
        });
        return { payload: p, missingId: stage };
      },
    },
    {
      name: "chat submitted for an unknown chat message of a real session",
      kind: "chat_submitted",
      missing: "chat_message",
      payload: () => {
        const id = randomUUID();
        const p = {
          v: 1,
          session_id: done.sessionId,
          chat_id: randomUUID(),
          message_id: id,
          submitted_at: now(),
        };
        return { payload: p, missingId: id };
      },
    },
    {
      name: "cancel for an unknown session",
      kind: "cancel_requested",
      missing: "session",
      payload: () => {
        const id = randomUUID();
        return {
          payload: { v: 1, session_id: id, requested_by: "x", requested_at: now() },
          missingId: id,
        };
      },
    },
    {
      name: "a due deadline for an unknown session",
      kind: "deadline",
      missing: "session",
      payload: () => {
        const id = randomUUID();
        const p = {
          v: 1,
          session_id: id,
          scope: "session",
          deadline_at: "2020-01-01T00:00:00.000Z",
        };
        return { payload: p, missingId: id };
      },
    },
    {
      name: "a chat deadline for an unknown stage of a real session",
      kind: "deadline",
      missing: "stage",
      payload: () => {
        const stage = randomUUID();
        const p = {
          v: 1,
          session_id: done.sessionId,
          scope: "chat",
          stage_id: stage,
          deadline_at: "2020-01-01T00:00:00.000Z",
        };
        return { payload: p, missingId: stage };
      },
    },
  ];

  for (const c of cases) {
    it(`acknowledges and drops ${c.name}, with one warn line and a count`, async () => {
      const before = await orphaned(c.kind, c.missing);
      // Scheduled deadline checks (the real session's) stay in the backlog; nothing else may.
      const backlog = await nats.bus.workBacklog("orchestrator");
      const { payload, missingId } = c.payload();
      // Straight onto the subject, as any publisher could (no dedupe id).
      nats.bus.connection.publish(
        nats.bus.subject(`work.orchestrator.${c.kind}`),
        JSON.stringify(payload),
      );
      await nats.bus.connection.flush();
      await waitFor(
        async () => (await orphaned(c.kind, c.missing)) === before + 1,
        10_000,
        "the drop",
      );
      // Acknowledged: nothing waits for a redelivery, nothing was dead-lettered.
      await waitFor(
        async () => (await nats.bus.workBacklog("orchestrator")) === backlog,
        5_000,
        "the acknowledgement",
      );
      expect((await nats.bus.listDeadLetters()).items).toEqual([]);
      const logged = lines.filter((l) => l.missing_id === missingId);
      expect(logged).toEqual([
        expect.objectContaining({
          level: 40,
          subject: `work.orchestrator.${c.kind}`,
          kind: c.kind,
          missing: c.missing,
          msg: `work message names a missing ${c.missing}; dropped`,
        }),
      ]);
    });
  }

  it("leaves the real session as it was and keeps the consumer working", async () => {
    const session = await t.db.prisma.alertSession.findUniqueOrThrow({
      where: { id: done.sessionId },
    });
    expect(session.status).toBe("completed");
    const execution = await t.db.prisma.agentExecution.findUniqueOrThrow({
      where: { id: done.executionId },
    });
    expect(execution.status).toBe("completed");
    const next = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, next, ["completed"]);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
