import { describe, expect, it } from "vitest";
import { createMetrics } from "../registry.ts";
import { busMetricsObserver } from "./observer.ts";

const at = new Date().toISOString();

describe("busMetricsObserver", () => {
  it("counts dashboard events by type, not work items; redeliveries and dead letters by durable", async () => {
    const metrics = createMetrics("agent-runner", { processMetrics: false });
    const observer = busMetricsObserver(metrics);
    const status = {
      v: 1,
      type: "session.status",
      session_id: "s",
      status: "completed",
      timestamp: at,
    } as const;
    observer.published?.({ key: "sessionStatus", payload: status });
    observer.published?.({ key: "sessionStatus", payload: status });
    observer.published?.({
      key: "streamChunk",
      payload: {
        v: 1,
        type: "stream.chunk",
        session_id: "s",
        stage_id: null,
        execution_id: null,
        event_id: "e",
        delta: "x",
        timestamp: at,
      } as never,
    });
    observer.published?.({
      key: "executionFinished",
      payload: {
        v: 1,
        session_id: "s",
        stage_id: null,
        execution_id: "x",
        kind: "chat",
        status: "completed",
        final_analysis: null,
        error: null,
        finished_at: at,
      } as never,
    });
    observer.redelivered?.("runner", 2);
    observer.deadLettered?.("runner");
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'tarsy_events_published_total{kind="session.status",service="agent-runner"} 2',
    );
    expect(text).toContain(
      'tarsy_events_published_total{kind="stream.chunk",service="agent-runner"} 1',
    );
    expect(text).not.toMatch(/tarsy_events_published_total\{kind="(execution|work)/);
    expect(text).toContain(
      'tarsy_work_redeliveries_total{consumer="agent-runner",service="agent-runner"} 1',
    );
    expect(text).toContain(
      'tarsy_dead_letters_total{consumer="agent-runner",service="agent-runner"} 1',
    );
  });
});
