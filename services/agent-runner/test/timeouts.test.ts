import { getExecution, listLLMInteractions, listSessionTimeline } from "@tarsy/db";
import { describe, expect } from "vitest";
import { ExecutionAbortedError } from "../src/errors.ts";
import { runExecution } from "../src/execution.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import {
  captureLogger,
  chunkMarker,
  record,
  runnerDeps,
  seedExecution,
  startLlm,
  runnerTest as test,
  waitFor,
} from "./support.ts";

test.override("envOptions", { iterationTimeout: "1s" });

describe("iteration timeouts", () => {
  test("a timed-out iteration is recorded and the loop goes on", async ({ env, llm, echo }) => {
    const { client } = await llm([
      { delay_ms: 3_000, text: "too late" },
      { text: "Final answer." },
    ]);
    const request = await seedExecution(env);
    const finished = await runExecution(
      runnerDeps(env, client, echo),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({ status: "completed", final_analysis: "Final answer." });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["error", "completed"],
      ["final_analysis", "completed"],
    ]);
    expect(timeline[0]?.content).toBe("LLM call timed out after 1000 ms");
    expect(timeline[0]?.metadata).toMatchObject({ kind: "iteration_timeout", iteration: 1 });
    const rows = await listLLMInteractions(env.db.prisma, { executionId: request.execution_id });
    expect(rows.map((r) => [r.interactionType, r.iteration, r.errorMessage])).toEqual([
      ["iteration", 1, "LLM call timed out after 1000 ms"],
      ["final_analysis", 2, null],
    ]);
    // The slow call was cut at the timeout, not waited for (its answer would take 3 s).
    expect(rows[0]?.durationMs).toBeGreaterThanOrEqual(1_000);
    expect(rows[0]?.durationMs).toBeLessThan(2_000);
  });

  test("two consecutive timeouts fail the execution", async ({ env, llm, echo }) => {
    const { client } = await llm([
      { delay_ms: 3_000, text: "late" },
      { delay_ms: 3_000, text: "late again" },
      { text: "never used" },
    ]);
    const request = await seedExecution(env);
    const finished = await runExecution(
      runnerDeps(env, client, echo),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("failed");
    expect(finished.error).toBe("LLM call timed out 2 times in a row (iteration timeout 1000 ms)");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.content])).toEqual([
      ["error", "LLM call timed out after 1000 ms"],
      ["error", "LLM call timed out after 1000 ms"],
      ["error", "LLM call timed out 2 times in a row (iteration timeout 1000 ms)"],
    ]);
  });
});

describe("cancellation", () => {
  test("a cancel mid-stream aborts the LLM call, ends the open event cancelled and still finishes", async ({
    env,
    stops,
    echo,
  }) => {
    const text = "The investigation is going on and on and on and on and on and on.";
    const llmLog = captureLogger();
    const started = await startLlm([{ text, chunk_size: 3, chunk_delay_ms: 100 }], llmLog.logger);
    stops.push(started.stop);
    const { client } = started;
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    const controller = new AbortController();
    const running = runExecution(runnerDeps(env, client, echo), request, controller.signal);
    await waitFor("streaming", () => rec.chunks.length >= 2 || undefined);
    const cancelledAt = Date.now();
    controller.abort(new ExecutionAbortedError("cancelled"));
    const finished = await running;
    expect(Date.now() - cancelledAt).toBeLessThan(1_000);
    expect(finished).toMatchObject({
      status: "cancelled",
      error: "execution cancelled",
      final_analysis: null,
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([["llm_response", "cancelled"]]);
    const partial = timeline[0]?.content ?? "";
    expect(partial.length).toBeGreaterThan(0);
    expect(text.startsWith(partial) && partial.length < text.length).toBe(true);
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution?.status).toBe("cancelled");
    const completed = rec.events.filter((e) => e.type === "timeline_event.completed");
    expect(completed).toHaveLength(1);
    // No more deltas after the cancel: llm-service saw the call cancelled (so the stream that
    // feeds the deltas has ended), and nothing came between a marker sent when the execution
    // returned and one sent after that.
    const returned = await chunkMarker(env.bus, rec, request.session_id);
    await waitFor("llm-service to see the cancel", () =>
      llmLog.lines.find(
        (l) => l.msg === "generate cancelled by the caller; provider request aborted",
      ),
    );
    expect(await chunkMarker(env.bus, rec, request.session_id)).toBe(returned + 1);
  });

  test("a cancel during a tool call aborts it and ends the tool event cancelled", async ({
    env,
    llm,
  }) => {
    const slow = new StandInGateway({ echo: () => "never" });
    slow.delayMs = 10_000;
    const { client } = await llm([
      { tool_calls: [{ id: "t1", name: "everything.echo", arguments: { message: "x" } }] },
    ]);
    const request = await seedExecution(env);
    const controller = new AbortController();
    const running = runExecution(runnerDeps(env, client, slow), request, controller.signal);
    await waitFor("tool call", () => slow.calls.length > 0 || undefined);
    controller.abort(new ExecutionAbortedError("timed_out"));
    const finished = await running;
    expect(finished.status).toBe("timed_out");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([["llm_tool_call", "timed_out"]]);
    expect(slow.released).toContain(request.execution_id);
  });
});
