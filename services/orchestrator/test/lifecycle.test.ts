import {
  cancelControlSubject,
  type ExecutionStatus,
  SESSIONS_EVENTS_SUBJECT,
  sessionEventsSubject,
  WORK_SUBJECTS,
} from "@tarsy/contracts";
import {
  ChatTurnActiveError,
  ChatUnavailableError,
  createTimelineEvent,
  type Db,
  getSession,
  listActiveSessions,
  listSessionExecutions,
  listSessionStages,
  listSessions,
  listSessionTimeline,
  submitChatMessage,
} from "@tarsy/db";
import { until, workStored } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import {
  stackTest as it,
  outboxPublished,
  runnerPeer,
  type SimpleChainOptions,
  simpleChainConfig,
  startTestOrchestrator,
  submit,
  waitForSession,
} from "./harness.ts";

/** Two stages and chat, under the given queue settings. */
const config = (queue: SimpleChainOptions["queue"]) =>
  simpleChainConfig({ queue, stages: ["investigate", "confirm"], chat: true });

/** The session's chat stage in `status`, if there is one. */
async function chatStage(db: Db, sessionId: string, status: ExecutionStatus) {
  const stages = await listSessionStages(db.prisma, sessionId);
  return stages.find((s) => s.kind === "chat" && s.status === status);
}

describe("orchestrator lifecycle (real Postgres and NATS)", () => {
  it("holds the concurrency cap across two orchestrators and starts waiting sessions FIFO", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const cfg = config({ max_concurrent_sessions: 2, session_timeout: "60s" });
    const peer = await runnerPeer(nats.bus, () => "hold");
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg, "orch-a"));
    orchestrators.push(
      await startTestOrchestrator(t.db, await nats.connectAnother(), cfg, "orch-b"),
    );
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(t.db, "test-alert", "simple"));

    let maxRunning = 0;
    const startedOrder: string[] = [];
    while (startedOrder.length < 6) {
      const running = (await listActiveSessions(t.db.prisma)).active;
      maxRunning = Math.max(maxRunning, running.length);
      for (const { id } of running) if (!startedOrder.includes(id)) startedOrder.push(id);
      if (peer.held.length > 0) {
        await peer.release((r) => ({ status: "completed", analysis: `done ${r.execution_id}` }));
      }
      await new Promise((r) => setTimeout(r, 30));
    }
    await until(
      async () => {
        await peer.release((r) => ({ status: "completed", analysis: `done ${r.execution_id}` }));
        return (await listSessions(t.db.prisma, { status: ["completed"] })).total === 6;
      },
      { what: "all sessions to complete", timeoutMs: 30_000 },
    );
    await peer.stop();
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(maxRunning).toBe(2);
    // FIFO: sessions started in the order they arrived (one admission pass may start several).
    const all = (await listSessions(t.db.prisma, { pageSize: 200 })).items;
    const time = (d: Date | null) => d?.getTime() ?? Number.POSITIVE_INFINITY;
    const started = all.toSorted(
      (a, b) =>
        time(a.startedAt) - time(b.startedAt) || a.createdAt.getTime() - b.createdAt.getTime(),
    );
    expect(started.map((s) => s.id)).toEqual(ids);
    expect(all.every((p) => p.podId === "orch-a" || p.podId === "orch-b")).toBe(true);
  }, 60_000);

  it("cancels a running session: runners are told, open work ends, no later stage runs", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const cfg = config({ session_timeout: "60s" });
    const peer = await runnerPeer(nats.bus, () => "hold");
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg));
    const id = await submit(t.db, "test-alert", "simple");
    await until(async () => peer.held.length === 1, { what: "first execution", timeoutMs: 10_000 });
    // The runner is streaming an answer (a timeline event still open).
    const held = peer.held[0];
    const streaming = await createTimelineEvent(t.db.prisma, {
      sessionId: id,
      stageId: held?.stage_id ?? null,
      executionId: held?.execution_id ?? null,
      eventType: "llm_response",
      status: "streaming",
      content: "",
    });
    const controls: unknown[] = [];
    const sub = nats.bus.subscribeTransient("cancelControl", cancelControlSubject(id), (c) => {
      controls.push(c);
    });
    await nats.bus.flush();
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: id,
      requested_by: "alice",
      reason: "duplicate of INC-123",
      requested_at: new Date().toISOString(),
    });
    const done = await waitForSession(t.db, id, ["cancelled"]);
    expect(done.errorMessage).toBe("cancelled by alice");
    expect(done).toMatchObject({ cancelledBy: "alice", cancelReason: "duplicate of INC-123" });
    await until(async () => controls.length === 1, { what: "cancel control", timeoutMs: 5_000 });
    expect(controls[0]).toMatchObject({ session_id: id, scope: "session", reason: "cancelled" });
    const executions = await listSessionExecutions(t.db.prisma, id);
    expect(executions.map((e) => e.status)).toEqual(["cancelled"]);
    // The runner's late answer changes nothing.
    await peer.release(() => ({ status: "completed", analysis: "too late" }));
    await until(async () => (await workStored(nats, WORK_SUBJECTS.executionFinished)) === 0, {
      what: "the late answer to be handled",
      timeoutMs: 10_000,
    });
    expect((await getSession(t.db.prisma, id))?.status).toBe("cancelled");
    expect(await listSessionStages(t.db.prisma, id)).toHaveLength(1);
    await outboxPublished(t.db);
    const events = (
      await nats.bus.replayEvents({ subject: sessionEventsSubject(id), afterSeq: 0, limit: 100 })
    ).events.map((e) => e.payload);
    const statuses = events.flatMap((e) => (e.type === "session.status" ? [e.status] : []));
    expect(statuses.slice(-2)).toEqual(["cancelling", "cancelled"]); // wire-literal: expected order
    // The terminal status says who cancelled and why, for a viewer with the session open.
    expect(
      events.find((e) => e.type === "session.status" && e.status === "cancelled"),
    ).toMatchObject({ cancelled_by: "alice", cancel_reason: "duplicate of INC-123" });
    // A second cancel of the ended session changes neither who nor why.
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: id,
      requested_by: "bob",
      reason: "me too",
      requested_at: new Date().toISOString(),
    });
    await until(async () => (await workStored(nats, WORK_SUBJECTS.cancelRequested)) === 0, {
      what: "the second cancel to be handled",
      timeoutMs: 10_000,
    });
    expect(await getSession(t.db.prisma, id)).toMatchObject({
      cancelledBy: "alice",
      cancelReason: "duplicate of INC-123",
    });
    // The open answer ended `cancelled`, announced before the session's terminal status: nothing
    // of the execution comes after it.
    const ended = (await listSessionTimeline(t.db.prisma, id)).find((e) => e.id === streaming.id);
    expect(ended?.status).toBe("cancelled");
    const endedAt = events.findIndex(
      (e) => e.type === "timeline_event.completed" && e.event_id === streaming.id,
    );
    const cancelledAt = events.findIndex(
      (e) => e.type === "session.status" && e.status === "cancelled",
    );
    expect(endedAt).toBeGreaterThan(-1);
    expect(endedAt).toBeLessThan(cancelledAt);
    sub.unsubscribe();
    await peer.stop();
  });

  it("times a session out even when its runner is gone", async ({ t, nats, orchestrators }) => {
    const cfg = config({ session_timeout: "1s" });
    const peer = await runnerPeer(nats.bus, () => "hold");
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg));
    const id = await submit(t.db, "test-alert", "simple");
    await peer.stop(); // the runner disappears with the work in hand
    const done = await waitForSession(t.db, id, ["timed_out"], 15_000);
    expect(done.errorMessage).toBe("session timed out after 1s (queue.session_timeout)");
    // TARSy stopped it itself: the system, with the limit that ran out.
    expect(done).toMatchObject({
      cancelledBy: "system",
      cancelReason: "session timed out after 1s (queue.session_timeout)",
    });
    const executions = await listSessionExecutions(t.db.prisma, id);
    expect(executions.map((e) => [e.status, e.errorMessage])).toEqual([
      ["timed_out", "session timed out after 1s (queue.session_timeout)"],
    ]);
  });

  it("cancels a queued session at once, with who and why", async ({ t, nats, orchestrators }) => {
    // One slot, held: the second session waits in the queue and is cancelled there.
    const peer = await runnerPeer(nats.bus, () => "hold");
    const cfg = config({ max_concurrent_sessions: 1, session_timeout: "60s" });
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg));
    await submit(t.db, "test-alert", "simple");
    await until(async () => peer.held.length === 1, { what: "first execution", timeoutMs: 10_000 });
    const queued = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, queued, ["pending"]);
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: queued,
      requested_by: "bob",
      reason: "noise",
      requested_at: new Date().toISOString(),
    });
    const done = await waitForSession(t.db, queued, ["cancelled"]);
    expect(done).toMatchObject({
      cancelledBy: "bob",
      cancelReason: "noise",
      reviewStatus: "reviewed",
      startedAt: null,
    });
    expect(done.completedAt).not.toBeNull();
    await outboxPublished(t.db);
    const events = (
      await nats.bus.replayEvents({
        subject: sessionEventsSubject(queued),
        afterSeq: 0,
        limit: 100,
      })
    ).events.map((e) => e.payload);
    expect(events.filter((e) => e.type === "session.status")).toEqual([
      expect.objectContaining({ status: "cancelled", cancelled_by: "bob", cancel_reason: "noise" }),
    ]);
    await peer.stop();
  });

  it("a session whose agents were cancelled with no one asking: cancelled by the system", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const peer = await runnerPeer(nats.bus, () => ({
      status: "cancelled",
      error: "execution cancelled",
    }));
    orchestrators.push(
      await startTestOrchestrator(t.db, nats.bus, config({ session_timeout: "60s" })),
    );
    const id = await submit(t.db, "test-alert", "simple");
    const done = await waitForSession(t.db, id, ["cancelled"], 15_000);
    expect(done.cancelledBy).toBe("system");
    expect(done.cancelReason).toBe(done.errorMessage);
    expect(done.cancelReason).toContain("execution cancelled");
    await peer.stop();
  });

  it("chat: two turns where the second sees the first; a busy or running session is refused", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const cfg = config({ session_timeout: "60s", chat_timeout: "30s" });
    const peer = await runnerPeer(
      nats.bus,
      (r) =>
        r.kind === "chat"
          ? "hold"
          : { status: "completed", analysis: `analysis by ${r.agent_name}` },
      t.db,
    );
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg));
    const id = await submit(t.db, "test-alert", "simple");
    // A chat on a running session is refused and stores nothing.
    await waitForSession(t.db, id, ["in_progress"]);
    await expect(
      submitChatMessage(t.db.prisma, { sessionId: id, author: "bob", content: "early?" }),
    ).rejects.toBeInstanceOf(ChatUnavailableError);
    await waitForSession(t.db, id, ["completed"]);

    await submitChatMessage(t.db.prisma, {
      sessionId: id,
      author: "bob",
      content: "Which pod first?",
    });
    await until(async () => peer.held.length === 1, { what: "first chat turn", timeoutMs: 10_000 });
    const first = peer.held[0];
    expect(first?.chat?.question).toBe("Which pod first?");
    expect(first?.context).toContain("analysis by Investigator");
    await expect(
      submitChatMessage(t.db.prisma, { sessionId: id, author: "bob", content: "and then?" }),
    ).rejects.toBeInstanceOf(ChatTurnActiveError);
    await peer.release(() => ({ status: "completed", analysis: "payments-7f9 crashed first" }));
    await until(async () => (await chatStage(t.db, id, "completed")) ?? null, {
      what: "first turn done",
      timeoutMs: 10_000,
    });

    await submitChatMessage(t.db.prisma, {
      sessionId: id,
      author: "bob",
      content: "Why did it crash?",
    });
    await until(async () => peer.held.length === 1, {
      what: "second chat turn",
      timeoutMs: 10_000,
    });
    const second = peer.held[0];
    expect(second?.context).toContain("Which pod first?");
    await peer.release(() => ({ status: "completed", analysis: "OOM" }));
    const questions = (await listSessionTimeline(t.db.prisma, id)).filter(
      (e) => e.eventType === "user_question",
    );
    expect(questions.map((q) => q.content)).toEqual(["Which pod first?", "Why did it crash?"]);
    await peer.stop();
  });

  it("cancels and times out a chat turn", async ({ t, nats, orchestrators }) => {
    const cfg = config({ session_timeout: "60s", chat_timeout: "1s" });
    const peer = await runnerPeer(nats.bus, (r) =>
      r.kind === "chat" ? "hold" : { status: "completed", analysis: "ok" },
    );
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg));
    const id = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, id, ["completed"]);

    await submitChatMessage(t.db.prisma, { sessionId: id, author: "bob", content: "q1" });
    await until(async () => peer.held.length === 1, { what: "chat turn", timeoutMs: 10_000 });
    const timedOut = await until(async () => chatStage(t.db, id, "timed_out"), {
      what: "chat timeout",
      timeoutMs: 10_000,
    });
    expect(timedOut.stageName).toBe("Chat Response");
    expect(timedOut.errorMessage).toBe("chat turn timed out after 1s (queue.chat_timeout)");
    peer.held.splice(0);

    await t.db.ping();
    await submitChatMessage(t.db.prisma, { sessionId: id, author: "bob", content: "q2" });
    await until(async () => peer.held.length === 1, {
      what: "second chat turn",
      timeoutMs: 10_000,
    });
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: id,
      requested_by: "bob",
      reason: "wrong question",
      requested_at: new Date().toISOString(),
    });
    await until(async () => chatStage(t.db, id, "cancelled"), {
      what: "chat cancel",
      timeoutMs: 10_000,
    });
    // Stopping a chat answer is no cancel of the session: nobody is recorded on it.
    expect(await getSession(t.db.prisma, id)).toMatchObject({
      status: "completed",
      cancelledBy: null,
      cancelReason: null,
    });
    await peer.stop();
  });

  it("an orchestrator killed mid-chain: another finishes the session exactly once", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const cfg = config({ session_timeout: "60s" });
    const peer = await runnerPeer(nats.bus, () => "hold");
    const busA = await nats.connectAnother();
    const a = await startTestOrchestrator(t.db, busA, cfg, "orch-a");
    const id = await submit(t.db, "test-alert", "simple");
    await until(async () => peer.held.length === 1, { what: "first execution", timeoutMs: 10_000 });
    await busA.close(); // dies without acking or draining
    void a.stop().catch(() => undefined);
    await peer.release(() => ({ status: "completed", analysis: "step one" }));
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg, "orch-b"));
    // The result may have gone to a pull request of orch-a's dead connection: then JetStream
    // redelivers it after the ack wait (30 s), not at once.
    await until(async () => peer.held.length === 1, {
      what: "second stage on orch-b",
      timeoutMs: 45_000,
    });
    await peer.release((r) => ({
      status: "completed",
      analysis: r.kind === "executive_summary" ? "sum" : "step two",
    }));
    await until(async () => peer.held.length === 1, { what: "summary request", timeoutMs: 15_000 });
    await peer.release(() => ({ status: "completed", analysis: "summary" }));
    const done = await waitForSession(t.db, id, ["completed"], 15_000);
    expect(done.executiveSummary).toBe("summary");
    const stages = await listSessionStages(t.db.prisma, id);
    expect(stages.map((s) => s.stageName)).toEqual(["investigate", "confirm"]);
    // The completion event leaves through the outbox after the commit: count once it is out.
    await outboxPublished(t.db);
    const completedEvents = (
      await nats.bus.replayEvents({ subject: SESSIONS_EVENTS_SUBJECT, afterSeq: 0, limit: 500 })
    ).events.filter(
      (e) =>
        e.payload.session_id === id &&
        e.payload.type === "session.status" &&
        e.payload.status === "completed",
    );
    expect(completedEvents).toHaveLength(1);
    await peer.stop();
  }, 100_000);
});
