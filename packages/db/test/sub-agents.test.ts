import { describe, expect } from "vitest";
import {
  abandonSubAgents,
  appendMessagesDelivering,
  cancelSubAgents,
  dispatchSubAgent,
  ensureStage,
  finishExecutionAttempt,
  getExecution,
  listUndeliveredSubAgentResults,
  startExecution,
  suspendExecution,
  wakeSuspendedParent,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

const USAGE = { input_tokens: 10, output_tokens: 5, thinking_tokens: 0, total_tokens: 15 };

async function parentExecution(db: Parameters<typeof newSession>[0]) {
  const session = await newSession(db);
  const { executions } = await ensureStage(
    db,
    { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
    [{ agentName: "Orchestrator", agentIndex: 1 }],
  );
  const parent = executions[0];
  if (!parent) throw new Error("no execution");
  await startExecution(db, parent.id, "runner-1");
  return parent;
}

const dispatch = (parentExecutionId: string, key: string, maxConcurrent = 3) => ({
  parentExecutionId,
  agentName: "LogAgent",
  kind: "investigation" as const,
  task: `task ${key}`,
  dispatchKey: key,
  maxConcurrent,
});

describe("sub-agents", () => {
  test("a dispatch creates one row in the parent's stage, once per dispatch key, within max_concurrent", async ({
    db,
  }) => {
    const parent = await parentExecution(db.prisma);
    const first = await dispatchSubAgent(db.prisma, dispatch(parent.id, "call-1", 2));
    expect(first.status).toBe("created");
    if (first.status === "refused") throw new Error("refused");
    expect(first.execution).toMatchObject({
      stageId: parent.stageId,
      agentIndex: parent.agentIndex,
      parentExecutionId: parent.id,
      task: "task call-1",
      status: "pending",
    });
    // The same tool call again (a redelivery): the same row.
    const again = await dispatchSubAgent(db.prisma, dispatch(parent.id, "call-1", 2));
    expect(again.status === "existing" && again.execution.id).toBe(first.execution.id);
    expect((await dispatchSubAgent(db.prisma, dispatch(parent.id, "call-2", 2))).status).toBe(
      "created",
    );
    const refused = await dispatchSubAgent(db.prisma, dispatch(parent.id, "call-3", 2));
    expect(refused).toMatchObject({
      status: "refused",
      reason: "2 sub-agents are already running (max_concurrent_agents 2)",
    });
  });

  test("a parent suspends only while a sub-agent runs and no outcome waits; an ending sub-agent wakes it once", async ({
    db,
  }) => {
    const parent = await parentExecution(db.prisma);
    const request = { v: 1, session_id: parent.sessionId, execution_id: parent.id };
    expect(await suspendExecution(db.prisma, parent.id, 1, request, USAGE)).toBe("nothing_pending");
    const sub = await dispatchSubAgent(db.prisma, dispatch(parent.id, "call-1"));
    if (sub.status === "refused") throw new Error("refused");
    // Another attempt owns the parent: not ours to suspend.
    expect(await suspendExecution(db.prisma, parent.id, 2, request, USAGE)).toBe("not_owned");
    expect(await suspendExecution(db.prisma, parent.id, 1, request, USAGE)).toBe("suspended");
    const suspended = await getExecution(db.prisma, parent.id);
    expect(suspended?.suspendedAt).not.toBeNull();
    expect(suspended?.totalTokens).toBe(15);

    await startExecution(db.prisma, sub.execution.id, "runner-2");
    await finishExecutionAttempt(db.prisma, sub.execution.id, 1, "completed", {
      finalAnalysis: "found it",
    });
    expect(await wakeSuspendedParent(db.prisma, parent.id)).toEqual(request);
    expect((await getExecution(db.prisma, parent.id))?.suspendedAt).toBeNull();
    // A second wake (a redelivered finish) finds it awake.
    expect(await wakeSuspendedParent(db.prisma, parent.id)).toBeNull();

    // The outcome waits for delivery: the parent may not suspend again before taking it.
    expect(await suspendExecution(db.prisma, parent.id, 1, request, USAGE)).toBe("results_ready");
    const undelivered = await listUndeliveredSubAgentResults(db.prisma, parent.id);
    expect(undelivered.map((e) => e.id)).toEqual([sub.execution.id]);
    await appendMessagesDelivering(
      db.prisma,
      { sessionId: parent.sessionId, stageId: parent.stageId, executionId: parent.id },
      [{ role: "user", content: "[Sub-agent completed] LogAgent: found it" }],
      [sub.execution.id],
    );
    expect(await listUndeliveredSubAgentResults(db.prisma, parent.id)).toEqual([]);
    expect(await suspendExecution(db.prisma, parent.id, 1, request, USAGE)).toBe("nothing_pending");
  });

  test("cancel ends unfinished sub-agents with the reason and marks them delivered; a restart abandons the rest", async ({
    db,
  }) => {
    const parent = await parentExecution(db.prisma);
    const a = await dispatchSubAgent(db.prisma, dispatch(parent.id, "a"));
    const b = await dispatchSubAgent(db.prisma, dispatch(parent.id, "b"));
    if (a.status === "refused" || b.status === "refused") throw new Error("refused");
    const ended = await cancelSubAgents(db.prisma, parent.id, "Cancelled by Orchestrator: done", [
      a.execution.id,
    ]);
    expect(ended.map((e) => [e.id, e.status, e.errorMessage])).toEqual([
      [a.execution.id, "cancelled", "Cancelled by Orchestrator: done"],
    ]);
    expect(await listUndeliveredSubAgentResults(db.prisma, parent.id)).toEqual([]);
    const abandoned = await abandonSubAgents(db.prisma, parent.id);
    expect(abandoned.map((e) => [e.id, e.status])).toEqual([[b.execution.id, "cancelled"]]);
    expect((await getExecution(db.prisma, b.execution.id))?.resultDeliveredAt).not.toBeNull();
  });
});
