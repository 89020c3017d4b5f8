import type { StreamChunk, TimelineEventCompleted, TimelineEventCreated } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import {
  dispatchedExecutionId,
  EMPTY_TIMELINE,
  groupByExecution,
  subAgentParents,
  subAgentResultText,
  type TimelineItem,
  timelineItems,
  timelineReducer,
} from "./timeline.ts";

const ts = "2026-11-22T04:00:00.000Z";
const created = (id: string, seq: number, extra: Partial<TimelineEventCreated> = {}) =>
  ({
    v: 1,
    type: "timeline_event.created",
    session_id: "s1",
    stage_id: "st1",
    execution_id: "ex1",
    event_id: id,
    sequence_number: seq,
    event_type: "llm_response",
    status: "streaming",
    content: "",
    metadata: null,
    timestamp: ts,
    ...extra,
  }) satisfies TimelineEventCreated;
const completed = (id: string, content: string) =>
  ({
    v: 1,
    type: "timeline_event.completed",
    session_id: "s1",
    stage_id: "st1",
    execution_id: "ex1",
    event_id: id,
    event_type: "llm_response",
    status: "completed",
    content,
    metadata: { tokens: 3 },
    timestamp: ts,
  }) satisfies TimelineEventCompleted;
const chunk = (id: string, delta: string) =>
  ({
    v: 1,
    type: "stream.chunk",
    session_id: "s1",
    stage_id: "st1",
    execution_id: "ex1",
    event_id: id,
    delta,
    timestamp: ts,
  }) satisfies StreamChunk;

describe("timelineReducer", () => {
  it("streams deltas into a created event and settles on the completed content", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "created", event: created("e1", 1) });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "Disk ") });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "full") });
    expect(timelineItems(s).map((i) => [i.content, i.status])).toEqual([
      ["Disk full", "streaming"],
    ]);
    s = timelineReducer(s, { kind: "completed", event: completed("e1", "Disk full on /var") });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", " late") });
    expect(timelineItems(s)).toMatchObject([
      { content: "Disk full on /var", status: "completed", metadata: { tokens: 3 } },
    ]);
  });

  it("a reset chunk replaces the partial text of a retried call instead of appending", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "created", event: created("e1", 1) });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "The pod is OOM") });
    s = timelineReducer(s, { kind: "chunk", chunk: { ...chunk("e1", ""), reset: true } });
    expect(timelineItems(s)).toMatchObject([{ content: "", status: "streaming", retries: 1 }]);
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "The pod is ") });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "OOMKilled") });
    expect(timelineItems(s)[0]?.content).toBe("The pod is OOMKilled");
    s = timelineReducer(s, { kind: "completed", event: completed("e1", "The pod is OOMKilled") });
    expect(timelineItems(s).map((i) => i.content)).toEqual(["The pod is OOMKilled"]);
  });

  it("a reset that outran its created event drops the early deltas", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "chunk", chunk: chunk("e1", "half ") });
    s = timelineReducer(s, { kind: "chunk", chunk: { ...chunk("e1", "whole"), reset: true } });
    s = timelineReducer(s, { kind: "created", event: created("e1", 1) });
    expect(timelineItems(s)[0]?.content).toBe("whole");
  });

  it("keeps deltas that outran their created event", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "chunk", chunk: chunk("e1", "early ") });
    expect(timelineItems(s)).toEqual([]);
    s = timelineReducer(s, { kind: "created", event: created("e1", 1) });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "text") });
    expect(timelineItems(s)[0]?.content).toBe("early text");
    expect(s.pendingDeltas.size).toBe(0);
  });

  it("shows each event once when a REST load and a replay overlap, in sequence order", () => {
    const rest = {
      session_id: "s1",
      events: [
        {
          id: "e2",
          session_id: "s1",
          stage_id: "st1",
          execution_id: "ex1",
          sequence_number: 2,
          event_type: "llm_tool_call" as const,
          status: "completed" as const,
          content: "kubectl get pods",
          metadata: { server: "k8s" },
          created_at: ts,
          updated_at: ts,
        },
      ],
    };
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "created", event: created("e3", 3) });
    s = timelineReducer(s, { kind: "loaded", timeline: rest });
    s = timelineReducer(s, {
      kind: "created",
      event: created("e1", 1, { status: "completed", content: "a" }),
    });
    s = timelineReducer(s, { kind: "created", event: created("e2", 2, { status: "streaming" }) });
    s = timelineReducer(s, { kind: "loaded", timeline: rest });
    expect(timelineItems(s).map((i) => [i.event_id, i.status])).toEqual([
      ["e1", "completed"],
      ["e2", "completed"],
      ["e3", "streaming"],
    ]);
  });

  it("orders a large load out of order by sequence, and slots later live events between", () => {
    const event = (seq: number) => ({
      id: `e${seq}`,
      session_id: "s1",
      stage_id: "st1",
      execution_id: "ex1",
      sequence_number: seq,
      event_type: "llm_response" as const,
      status: "completed" as const,
      content: `answer ${seq}`,
      metadata: null,
      created_at: ts,
      updated_at: ts,
    });
    // Every even sequence number up to 10,000, shuffled deterministically.
    const seqs = Array.from({ length: 5_000 }, (_, i) => ((i * 7_919) % 5_000) * 2 + 2);
    let s = timelineReducer(EMPTY_TIMELINE, {
      kind: "loaded",
      timeline: { session_id: "s1", events: seqs.map(event) },
    });
    expect(s.order).toHaveLength(5_000);
    s = timelineReducer(s, { kind: "created", event: created("odd-1", 1) });
    s = timelineReducer(s, { kind: "created", event: created("odd-5001", 5_001) });
    s = timelineReducer(s, { kind: "created", event: created("odd-10001", 10_001) });
    const order = timelineItems(s).map((i) => i.sequence_number);
    expect(order).toHaveLength(5_003);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect([order[0], order[2_500], order[2_501], order.at(-1)]).toEqual([1, 5_000, 5_001, 10_001]);
  });

  it("does not lose streamed text when a REST reload returns a shorter snapshot", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "created", event: created("e1", 1) });
    s = timelineReducer(s, { kind: "chunk", chunk: chunk("e1", "partial answer") });
    s = timelineReducer(s, {
      kind: "loaded",
      timeline: {
        session_id: "s1",
        events: [
          {
            id: "e1",
            session_id: "s1",
            stage_id: "st1",
            execution_id: "ex1",
            sequence_number: 1,
            event_type: "llm_response",
            status: "streaming",
            content: "",
            metadata: null,
            created_at: ts,
            updated_at: ts,
          },
        ],
      },
    });
    expect(timelineItems(s)[0]?.content).toBe("partial answer");
  });

  it("groups parallel agents by execution", () => {
    let s = timelineReducer(EMPTY_TIMELINE, { kind: "created", event: created("a1", 1) });
    s = timelineReducer(s, {
      kind: "created",
      event: created("b1", 2, { execution_id: "ex2" }),
    });
    s = timelineReducer(s, { kind: "created", event: created("a2", 3) });
    const groups = groupByExecution(timelineItems(s));
    expect([...groups.entries()].map(([k, v]) => [k, v.map((i) => i.event_id)])).toEqual([
      ["ex1", ["a1", "a2"]],
      ["ex2", ["b1"]],
    ]);
  });
});

describe("sub-agents on the timeline", () => {
  const item = (extra: Partial<TimelineItem>): TimelineItem => ({
    event_id: "e",
    stage_id: "st1",
    execution_id: "ex1",
    sequence_number: 1,
    event_type: "llm_tool_call",
    status: "completed",
    content: "",
    metadata: null,
    timestamp: ts,
    ...extra,
  });

  it("knows each sub-agent's parent from the executions and from task_assigned events", () => {
    const parents = subAgentParents(
      [
        { id: "ex1", parent_execution_id: null },
        { id: "sub1", parent_execution_id: "ex1" },
      ],
      [
        item({
          execution_id: "sub2",
          event_type: "task_assigned",
          content: "Read the logs.",
          metadata: { parent_execution_id: "ex1" },
        }),
        item({ execution_id: "sub2", event_type: "llm_response" }),
        item({ execution_id: "ex1", event_type: "llm_response" }),
        // Only a task_assigned event names a parent.
        item({
          execution_id: "x",
          event_type: "llm_response",
          metadata: { parent_execution_id: "ex1" },
        }),
      ],
    );
    expect([...parents.entries()]).toEqual([
      ["sub1", "ex1"],
      ["sub2", "ex1"],
    ]);
  });

  it("reads the execution id a dispatch_agent call's result names, and nothing else", () => {
    const dispatch = (content: string, metadata: Record<string, unknown> = {}) =>
      item({ content, metadata: { tool_name: "dispatch_agent", ...metadata } });
    expect(dispatchedExecutionId(dispatch('{"execution_id":"sub1","status":"accepted"}'))).toBe(
      "sub1",
    );
    // A result cut short for storage still names it.
    expect(dispatchedExecutionId(dispatch('{"execution_id": "sub2", "status": "acc'))).toBe("sub2");
    expect(dispatchedExecutionId(dispatch("Too many sub-agents running", { is_error: true }))).toBe(
      null,
    );
    expect(dispatchedExecutionId(dispatch(""))).toBe(null);
    expect(
      dispatchedExecutionId(
        item({
          content: '{"execution_id":"sub1"}',
          metadata: { server_name: "demo", tool_name: "dispatch_agent" },
        }),
      ),
    ).toBe(null);
    expect(
      dispatchedExecutionId(
        item({ event_type: "llm_response", content: '{"execution_id":"sub1"}' }),
      ),
    ).toBe(null);
  });

  it("drops the heading line of a sub-agent result", () => {
    expect(subAgentResultText("[Sub-agent completed] LogAgent (sub1):\nOOM, exit 137.")).toBe(
      "OOM, exit 137.",
    );
    expect(subAgentResultText("[Sub-agent timed out] SlowAgent (sub2):\ndeadline")).toBe(
      "deadline",
    );
    expect(subAgentResultText("something else")).toBe("something else");
  });
});
