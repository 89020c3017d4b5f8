import { randomUUID } from "node:crypto";
import { workSubject } from "@tarsy/contracts";
import { getExecution, getSession, listSessionExecutions } from "@tarsy/db";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SharedStack,
  simpleChainConfig,
  startSharedStack,
  submit,
  waitForSession,
  workMessages,
} from "./harness.ts";

const config = simpleChainConfig({
  queue: { max_concurrent_sessions: 2, session_timeout: "10m" },
  chat: true,
});

interface Line {
  level: number;
  msg: string;
  subject?: string;
  kind?: string;
  missing?: string;
  missing_id?: string;
}

describe("work messages naming missing things (real Postgres and NATS)", () => {
  let stack: SharedStack<Line>;
  let done: { sessionId: string; stageId: string; executionId: string };

  beforeAll(async () => {
    stack = await startSharedStack<Line>(config, "warn");
    const { t, nats } = stack;
    const sessionId = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, sessionId, ["completed"]);
    const execution = (await listSessionExecutions(t.db.prisma, sessionId)).find(
      (e) => e.kind === "investigation",
    );
    if (!execution) throw new Error("no investigation execution");
    done = { sessionId, stageId: execution.stageId ?? "", executionId: execution.id };
    // All that stays in the backlog: the finished session's deadline check, due in 10 minutes.
    await until(async () => (await nats.admin.workBacklog("orchestrator")) === 1, {
      what: "the session's work to settle",
      timeoutMs: 10_000,
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const orphaned = async (kind: string, missing: string) =>
    (await stack.metrics.workOrphaned.get()).values.find(
      (v) => v.labels.kind === kind && v.labels.missing === missing,
    )?.value ?? 0;

  const cases: {
    name: string;
    kind: string;
    missing: string;
    /** The message, naming `missingId` where it names the missing thing. */
    payload: (missingId: string) => Record<string, unknown>;
  }[] = [
    {
      name: "session submitted for an unknown session",
      kind: "session_submitted",
      missing: "session",
      payload: (id) => workMessages.sessionSubmitted({ session_id: id }),
    },
    {
      name: "execution finished for an unknown session",
      kind: "execution_finished",
      missing: "session",
      payload: (id) => workMessages.executionFinished({ session_id: id, stage_id: null }),
    },
    {
      name: "execution finished for an unknown execution of a real session",
      kind: "execution_finished",
      missing: "execution",
      payload: (id) =>
        workMessages.executionFinished({
          session_id: done.sessionId,
          stage_id: done.stageId,
          execution_id: id,
        }),
    },
    {
      name: "execution finished naming a stage the execution is not in",
      kind: "execution_finished",
      missing: "stage",
      payload: (id) =>
        workMessages.executionFinished({
          session_id: done.sessionId,
          execution_id: done.executionId,
          stage_id: id,
        }),
    },
    {
      name: "chat submitted for an unknown chat message of a real session",
      kind: "chat_submitted",
      missing: "chat_message",
      payload: (id) => workMessages.chatSubmitted({ session_id: done.sessionId, message_id: id }),
    },
    {
      name: "cancel for an unknown session",
      kind: "cancel_requested",
      missing: "session",
      payload: (id) => workMessages.cancelRequested({ session_id: id }),
    },
    {
      name: "a due deadline for an unknown session",
      kind: "deadline",
      missing: "session",
      payload: (id) =>
        workMessages.deadline({ session_id: id, scope: "session", stage_id: undefined }),
    },
    {
      name: "a chat deadline for an unknown stage of a real session",
      kind: "deadline",
      missing: "stage",
      payload: (id) => workMessages.deadline({ session_id: done.sessionId, stage_id: id }),
    },
  ];

  for (const c of cases) {
    it(`acknowledges and drops ${c.name}, with one warn line and a count`, async () => {
      const before = await orphaned(c.kind, c.missing);
      // Scheduled deadline checks (the real session's) stay in the backlog; nothing else may.
      const backlog = await stack.nats.admin.workBacklog("orchestrator");
      const missingId = randomUUID();
      const payload = c.payload(missingId);
      // Straight onto the subject, as any publisher could (no dedupe id).
      const raw = await stack.nats.raw();
      raw.publish(
        stack.nats.bus.subject(workSubject("orchestrator", c.kind)),
        JSON.stringify(payload),
      );
      await raw.flush();
      await until(async () => (await orphaned(c.kind, c.missing)) === before + 1, {
        what: "the drop",
        timeoutMs: 10_000,
      });
      // Acknowledged: nothing waits for a redelivery, nothing was dead-lettered.
      await until(async () => (await stack.nats.admin.workBacklog("orchestrator")) === backlog, {
        what: "the acknowledgement",
        timeoutMs: 5_000,
      });
      expect((await stack.nats.admin.listDeadLetters()).items).toEqual([]);
      const logged = stack.lines.filter((l) => l.missing_id === missingId);
      expect(logged).toEqual([
        expect.objectContaining({
          level: 40,
          subject: workSubject("orchestrator", c.kind),
          kind: c.kind,
          missing: c.missing,
          msg: `work message names a missing ${c.missing}; dropped`,
        }),
      ]);
    });
  }

  it("leaves the real session as it was and keeps the consumer working", async () => {
    const session = await getSession(stack.t.db.prisma, done.sessionId);
    expect(session?.status).toBe("completed");
    const execution = await getExecution(stack.t.db.prisma, done.executionId);
    expect(execution?.status).toBe("completed");
    const next = await submit(stack.t.db, "test-alert", "simple");
    await waitForSession(stack.t.db, next, ["completed"]);
    expect(stack.lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
