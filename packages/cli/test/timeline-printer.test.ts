import type { PersistentEvent, WsChunkFrame } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { TimelinePrinter } from "../src/timeline-printer.ts";

const T = "2026-01-01T00:00:00.000Z";
const base = {
  v: 1 as const,
  session_id: "s1",
  stage_id: "st1",
  execution_id: "ex1",
  metadata: null,
  timestamp: T,
};

const created = (id: string, content = ""): PersistentEvent => ({
  ...base,
  type: "timeline_event.created",
  event_id: id,
  sequence_number: 1,
  event_type: "final_analysis",
  status: "streaming",
  content,
});
const completed = (id: string, content: string): PersistentEvent => ({
  ...base,
  type: "timeline_event.completed",
  event_id: id,
  event_type: "final_analysis",
  status: "completed",
  content,
});
const chunk = (id: string, delta: string): WsChunkFrame => ({
  type: "stream.chunk",
  channel: "session:s1",
  session_id: "s1",
  timestamp: T,
  payload: { ...base, type: "stream.chunk", event_id: id, delta },
});

function printer() {
  const writes: string[] = [];
  return { writes, printer: new TimelinePrinter((text) => writes.push(text)) };
}

describe("TimelinePrinter", () => {
  it("prints chunks as they come and only the unstreamed rest at completion", () => {
    const { writes, printer: p } = printer();
    p.event(created("e1"));
    expect(writes).toEqual([]); // the label waits for the first text
    p.chunk(chunk("e1", "## Root"));
    p.chunk(chunk("e1", " cause\nOOM"));
    p.event(completed("e1", "## Root cause\nOOM-killed."));
    expect(writes).toEqual(["  FINAL ANALYSIS: ", "## Root", " cause\n    OOM", "-killed.", "\n"]);
  });

  it("keeps chunks that overtake their event's creation, so the text starts at its beginning", () => {
    const { writes, printer: p } = printer();
    p.chunk(chunk("e1", "Hel"));
    p.chunk(chunk("e1", "lo "));
    expect(writes).toEqual([]);
    p.event(created("e1"));
    p.chunk(chunk("e1", "world"));
    p.event(completed("e1", "Hello world"));
    expect(writes.join("")).toBe("  FINAL ANALYSIS: Hello world\n");
  });

  it("prints a streamed event that completed without chunks (a replay) as one block", () => {
    const { writes, printer: p } = printer();
    p.event(created("e1"));
    p.event(completed("e1", "line one\nline two"));
    expect(writes.join("")).toBe("  FINAL ANALYSIS:\n    line one\n    line two\n");
  });

  it("labels a stream resumed after another line and reprints a final text that differs", () => {
    const { writes, printer: p } = printer();
    p.event(created("e1"));
    p.chunk(chunk("e1", "abc"));
    p.event({
      ...base,
      type: "stage.status",
      stage_id: "st2",
      stage_name: "x",
      stage_index: 2,
      status: "started",
      timestamp: T,
    });
    p.chunk(chunk("e1", "def"));
    p.event(completed("e1", "something else"));
    expect(writes.join("")).toBe(
      "  FINAL ANALYSIS: abc\n▶ stage 2 x: started\n  FINAL ANALYSIS (cont.): def\n  FINAL ANALYSIS (final): something else\n",
    );
  });

  it("names the tool, its arguments and a failure on tool calls and summaries", () => {
    const { writes, printer: p } = printer();
    const tool = (
      id: string,
      type: "llm_tool_call" | "mcp_tool_summary",
      metadata: Record<string, unknown>,
      content: string,
    ): PersistentEvent => ({
      ...base,
      type: "timeline_event.completed",
      event_id: id,
      event_type: type,
      status: "completed",
      content,
      metadata,
    });
    p.event(
      tool(
        "t1",
        "llm_tool_call",
        {
          server_name: "demo-cluster",
          tool_name: "get_pods",
          arguments: { namespace: "payments" },
          is_error: false,
        },
        "NAME  READY",
      ),
    );
    p.event(
      tool(
        "t2",
        "llm_tool_call",
        {
          server_name: "demo-cluster",
          tool_name: "get_secret",
          arguments: { name: "x" },
          is_error: true,
        },
        "NotFound",
      ),
    );
    p.event(
      tool(
        "t3",
        "mcp_tool_summary",
        { server_name: "demo-cluster", tool_name: "describe_pod" },
        "OOMKilled",
      ),
    );
    expect(writes.join("")).toBe(
      [
        '  tool call demo-cluster.get_pods({"namespace":"payments"}): NAME  READY',
        '  tool call demo-cluster.get_secret({"name":"x"}) failed: NotFound',
        "  tool summary demo-cluster.describe_pod: OOMKilled",
        "",
      ].join("\n"),
    );
  });

  it("names a forced conclusion and its reason (events without a reason: the iteration limit)", () => {
    const { writes, printer: p } = printer();
    const forced = (id: string, metadata: Record<string, unknown>) => {
      p.event({ ...base, ...created(id), metadata } as PersistentEvent);
      p.event({ ...base, ...completed(id, "Best so far."), metadata } as PersistentEvent);
    };
    forced("e1", { forced_conclusion: true, reason: "time_budget" });
    forced("e2", { forced_conclusion: true });
    expect(writes.join("")).toBe(
      "  FINAL ANALYSIS (forced conclusion: time budget): Best so far.\n" +
        "  FINAL ANALYSIS (forced conclusion: max iterations): Best so far.\n",
    );
  });
});
