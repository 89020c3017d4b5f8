import { describe, expect } from "vitest";
import {
  appendMessages,
  completeTimelineEvent,
  createDb,
  createTimelineEvent,
  discardInterruptedAttempt,
  ensureStage,
  listExecutionTimeline,
  listMessages,
  listSessionTimeline,
  SessionNotFoundError,
} from "../src/index.ts";
import { insertTimelineEventRows } from "../src/testing.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("timeline", () => {
  test("forged rows follow the session's events and take the next numbers after them", async ({
    db,
  }) => {
    const session = await newSession(db.prisma);
    await createTimelineEvent(db.prisma, { sessionId: session.id, eventType: "llm_response" });
    const ids = await insertTimelineEventRows(db.prisma, session.id, {
      count: 3,
      eventType: "llm_thinking",
      content: "thought {n}",
    });
    const next = await createTimelineEvent(db.prisma, {
      sessionId: session.id,
      eventType: "llm_response",
    });
    const events = await listSessionTimeline(db.prisma, session.id);
    expect(events.map((e) => [e.sequenceNumber, e.status, e.content])).toEqual([
      [1, "streaming", ""],
      [2, "completed", "thought 2"],
      [3, "completed", "thought 3"],
      [4, "completed", "thought 4"],
      [5, "streaming", ""],
    ]);
    expect(events.slice(1, 4).map((e) => e.id)).toEqual(ids);
    expect(next.sequenceNumber).toBe(5);
  });

  test("parallel writers of one session never get the same sequence number", async ({
    db,
    database,
  }) => {
    const session = await newSession(db.prisma);
    const other = await newSession(db.prisma);
    const { executions } = await ensureStage(
      db.prisma,
      {
        sessionId: session.id,
        stageName: "investigate",
        stageIndex: 1,
        parallelType: "multi_agent",
      },
      [1, 2, 3, 4].map((i) => ({ agentName: `agent-${i}`, agentIndex: i })),
    );
    // Four agents, each on its own connection pool (as on separate runner replicas).
    const runners = executions.map(() => createDb({ url: database.url, poolSize: 3 }));
    try {
      await Promise.all(
        executions.map((execution, i) =>
          Promise.all(
            Array.from({ length: 25 }, (_, n) =>
              createTimelineEvent(runners[i]!.prisma, {
                sessionId: session.id,
                stageId: execution.stageId,
                executionId: execution.id,
                eventType: "llm_response",
                content: `agent ${i} event ${n}`,
              }),
            ),
          ),
        ),
      );
    } finally {
      await Promise.all(runners.map((r) => r.close()));
    }
    const events = await listSessionTimeline(db.prisma, session.id);
    expect(events.map((e) => e.sequenceNumber)).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    for (const execution of executions) {
      expect(await listExecutionTimeline(db.prisma, execution.id)).toHaveLength(25);
    }
    // Another session has its own counter.
    const first = await createTimelineEvent(db.prisma, {
      sessionId: other.id,
      eventType: "llm_response",
    });
    expect(first.sequenceNumber).toBe(1);
    await expect(
      createTimelineEvent(db.prisma, {
        sessionId: "00000000-0000-0000-0000-000000000000",
        eventType: "llm_response",
      }),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
  });

  test("a streaming event completes once and keeps its metadata", async ({ db }) => {
    const session = await newSession(db.prisma);
    const event = await createTimelineEvent(db.prisma, {
      sessionId: session.id,
      eventType: "llm_tool_call",
      content: "calling pods_list",
      metadata: { server: "kubernetes", tool: "pods_list", arguments: { ns: "payments" } },
    });
    expect(event.status).toBe("streaming");
    expect(event.stageId).toBeNull();

    const done = await completeTimelineEvent(db.prisma, event.id, {
      metadata: { is_error: false },
    });
    expect(done?.status).toBe("completed");
    expect(done?.content).toBe("calling pods_list");
    expect(done?.metadata).toEqual({
      server: "kubernetes",
      tool: "pods_list",
      arguments: { ns: "payments" },
      is_error: false,
    });
    // A second completion (a redelivery) is refused.
    expect(await completeTimelineEvent(db.prisma, event.id, { content: "other" })).toBeNull();
    const [stored] = await listSessionTimeline(db.prisma, session.id);
    expect(stored?.content).toBe("calling pods_list");
  });

  test("a streamed answer that turns out final is retyped as it completes", async ({ db }) => {
    const session = await newSession(db.prisma);
    const event = await createTimelineEvent(db.prisma, {
      sessionId: session.id,
      eventType: "llm_response",
    });
    const done = await completeTimelineEvent(db.prisma, event.id, {
      content: "the answer",
      eventType: "final_analysis",
    });
    expect([done?.eventType, done?.status, done?.content]).toEqual([
      "final_analysis",
      "completed",
      "the answer",
    ]);
    // A completed event is not retyped by a late completion.
    expect(
      await completeTimelineEvent(db.prisma, event.id, { eventType: "llm_response" }),
    ).toBeNull();
    expect((await listSessionTimeline(db.prisma, session.id))[0]?.eventType).toBe("final_analysis");
  });

  test("an interrupted attempt's conversation goes and its streaming events fail", async ({
    db,
  }) => {
    const session = await newSession(db.prisma);
    const { executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "s", stageIndex: 1 },
      [
        { agentName: "a", agentIndex: 1 },
        { agentName: "b", agentIndex: 2 },
      ],
    );
    const [a, b] = executions;
    const ref = (execution: typeof a) => ({
      sessionId: session.id,
      stageId: execution!.stageId,
      executionId: execution!.id,
    });
    const finished = await createTimelineEvent(db.prisma, { ...ref(a), eventType: "llm_thinking" });
    await completeTimelineEvent(db.prisma, finished.id, { content: "thought" });
    const open = await createTimelineEvent(db.prisma, { ...ref(a), eventType: "llm_response" });
    await createTimelineEvent(db.prisma, { ...ref(b), eventType: "llm_response" });
    await appendMessages(db.prisma, ref(a), [{ role: "user", content: "investigate" }]);
    await appendMessages(db.prisma, ref(b), [{ role: "user", content: "investigate" }]);

    const ended = await discardInterruptedAttempt(db.prisma, a!.id, 1);
    expect(ended.map((e) => [e.id, e.status, e.metadata])).toEqual([
      [open.id, "failed", { interrupted: true, attempt: 1 }],
    ]);
    const statuses = (await listSessionTimeline(db.prisma, session.id)).map((e) => e.status);
    expect(statuses).toEqual(["completed", "failed", "streaming"]); // wire-literal: expected outcome
    expect(await listMessages(db.prisma, a!.id)).toEqual([]);
    expect(await listMessages(db.prisma, b!.id)).toHaveLength(1);
  });
});

describe("timeline rows", () => {
  test("createTimelineEvent returns exactly what is stored", async ({ db }) => {
    const session = await newSession(db.prisma);
    const created = await createTimelineEvent(db.prisma, {
      id: "5b0e7c1e-4c56-4a77-9a57-0c3f4c3a9a11",
      sessionId: session.id,
      eventType: "executive_summary",
      status: "completed",
      content: "summary",
      metadata: { model: "m", nested: { n: 1 } },
    });
    const stored = await db.prisma.timelineEvent.findUniqueOrThrow({ where: { id: created.id } });
    expect(created).toEqual(stored);
    expect(created.id).toBe("5b0e7c1e-4c56-4a77-9a57-0c3f4c3a9a11");
    expect(created.sequenceNumber).toBe(1);
    expect(created.metadata).toEqual({ model: "m", nested: { n: 1 } });
    expect(created.createdAt).toBeInstanceOf(Date);
  });
});
