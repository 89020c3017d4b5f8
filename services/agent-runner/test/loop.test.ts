import {
  getExecution,
  listLLMInteractions,
  listMCPInteractions,
  listMessages,
  listSessionTimeline,
} from "@tarsy/db";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import { createEnv, record, runnerDeps, seedExecution, runnerTest as test } from "./support.ts";

describe("function calling loop", () => {
  test("a multi-iteration tool loop ends in a final analysis with the exact timeline, messages and interactions", async ({
    env,
    stops,
    llm,
    echo,
  }) => {
    const { client } = await llm([
      {
        thinking: "Let me check the pod.",
        text: "Checking the pod.",
        chunk_size: 4,
        tool_calls: [{ id: "call-1", name: "everything.echo", arguments: { message: "hello" } }],
      },
      {
        text: "Still looking.",
        tool_calls: [{ id: "call-2", name: "everything.echo", arguments: { message: "again" } }],
      },
      { text: "Root cause: the pod ran out of memory.", chunk_size: 5 },
    ]);
    const request = await seedExecution(env, { context: "Stage one found OOM kills." });
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);

    const finished = await runExecution(
      runnerDeps(env, client, echo),
      request,
      new AbortController().signal,
    );

    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Root cause: the pod ran out of memory.",
      error: null,
      kind: "investigation",
    });
    expect(finished.token_usage?.total_tokens).toBeGreaterThan(0);

    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.sequenceNumber, e.eventType, e.status, e.content])).toEqual([
      [1, "llm_thinking", "completed", "Let me check the pod."],
      [2, "llm_response", "completed", "Checking the pod."],
      [3, "llm_tool_call", "completed", "Echo: hello"],
      [4, "llm_response", "completed", "Still looking."],
      [5, "llm_tool_call", "completed", "Echo: again"],
      [6, "final_analysis", "completed", "Root cause: the pod ran out of memory."],
    ]);
    expect(timeline[0]?.metadata).toEqual({ source: "native" });
    expect(timeline[2]?.metadata).toEqual({
      server_name: "everything",
      tool_name: "echo",
      arguments: { message: "hello" },
      call_id: "call-1",
      is_error: false,
    });
    expect(new Set(timeline.map((e) => e.executionId))).toEqual(new Set([request.execution_id]));

    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages.map((m) => [m.sequenceNumber, m.role, m.toolCallId, m.toolName])).toEqual([
      [1, "system", null, null],
      [2, "user", null, null],
      [3, "assistant", null, null],
      [4, "tool", "call-1", "everything.echo"],
      [5, "assistant", null, null],
      [6, "tool", "call-2", "everything.echo"],
      [7, "assistant", null, null],
    ]);
    expect(messages[2]?.toolCalls).toEqual([
      { id: "call-1", name: "everything.echo", arguments: '{"message":"hello"}' },
    ]);
    expect(messages[3]?.content).toBe(
      '<untrusted_data source="tool_result" tool="everything.echo">\nEcho: hello\n</untrusted_data>',
    );
    expect(messages[6]?.content).toBe("Root cause: the pod ran out of memory.");
    const system = messages[0]?.content ?? "";
    expect(system.indexOf("General SRE Agent Instructions")).toBeGreaterThan(-1);
    expect(system.indexOf("EVERYTHING-INSTRUCTIONS")).toBeGreaterThan(
      system.indexOf("General SRE Agent Instructions"),
    );
    expect(system.indexOf("CUSTOM-INSTRUCTIONS")).toBeGreaterThan(
      system.indexOf("EVERYTHING-INSTRUCTIONS"),
    );
    const user = messages[1]?.content ?? "";
    expect(user).toContain('{"alert":"PodCrashLooping","pod":"web-1"}');
    expect(user).toContain("RUNBOOK: check the pods first.");
    expect(user).toMatch(
      /<!-- CHAIN_CONTEXT_START -->\nStage one found OOM kills\.\n<!-- CHAIN_CONTEXT_END -->/,
    );

    const llmRows = await listLLMInteractions(env.db.prisma, {
      executionId: request.execution_id,
    });
    expect(llmRows.map((r) => [r.interactionType, r.iteration, r.lastMessageId])).toEqual([
      ["iteration", 1, messages[1]?.id],
      ["iteration", 2, messages[3]?.id],
      ["final_analysis", 3, messages[5]?.id],
    ]);
    expect(llmRows[0]?.thinkingContent).toBe("Let me check the pod.");
    expect(llmRows.every((r) => (r.durationMs ?? -1) >= 0 && (r.totalTokens ?? 0) > 0)).toBe(true);
    expect(
      (llmRows[0]!.llmRequest as { tools: { name: string }[] }).tools.map((t) => t.name),
    ).toEqual(["everything.echo"]);

    const mcpRows = await listMCPInteractions(env.db.prisma, {
      executionId: request.execution_id,
    });
    expect(mcpRows.map((r) => [r.interactionType, r.serverName, r.toolName])).toEqual([
      ["tool_list", "everything", null],
      ["tool_call", "everything", "echo"],
      ["tool_call", "everything", "echo"],
    ]);
    expect(mcpRows[1]?.toolArguments).toEqual({ message: "hello" });
    expect(mcpRows[1]?.toolResult).toEqual({ content: "Echo: hello", is_error: false });

    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution).toMatchObject({
      status: "completed",
      finalAnalysis: "Root cause: the pod ran out of memory.",
      attempt: 1,
      runnerId: "runner-test",
    });
    expect(execution?.totalTokens).toBe(finished.token_usage?.total_tokens);
    expect(echo.released).toContain(request.execution_id);

    // Every row was announced: created (streaming) then completed, with the same content.
    const timelineEvents = rec.events.filter((e) => e.type.startsWith("timeline_event"));
    expect(
      timelineEvents.map((e) => [
        e.type,
        "event_type" in e ? e.event_type : "",
        "status" in e ? e.status : "",
      ]),
    ).toEqual([
      ["timeline_event.created", "llm_thinking", "streaming"],
      ["timeline_event.created", "llm_response", "streaming"],
      ["timeline_event.completed", "llm_thinking", "completed"],
      ["timeline_event.completed", "llm_response", "completed"],
      ["timeline_event.created", "llm_tool_call", "streaming"],
      ["timeline_event.completed", "llm_tool_call", "completed"],
      ["timeline_event.created", "llm_response", "streaming"],
      ["timeline_event.completed", "llm_response", "completed"],
      ["timeline_event.created", "llm_tool_call", "streaming"],
      ["timeline_event.completed", "llm_tool_call", "completed"],
      ["timeline_event.created", "llm_response", "streaming"],
      ["timeline_event.completed", "final_analysis", "completed"],
    ]);
    // Deltas rebuild every streamed text exactly.
    for (const event of timeline.filter((e) => e.eventType !== "llm_tool_call")) {
      const deltas = rec.chunks.filter((c) => c.event_id === event.id).map((c) => c.delta);
      expect(deltas.join("")).toBe(event.content);
    }
    expect(rec.chunks.filter((c) => c.event_id === timeline[5]?.id)).toHaveLength(8);
  });

  test("max_iterations forces a conclusion with one more call without tools", async ({
    env,
    llm,
    echo,
  }) => {
    await env.cleanup();
    env = await createEnv({ maxIterations: 2 });
    const call = (id: string) => ({
      text: `Looking (${id}).`,
      tool_calls: [{ id, name: "everything.echo", arguments: { message: id } }],
    });
    const { client } = await llm([call("c1"), call("c2"), { text: "Best guess: memory leak." }]);
    const request = await seedExecution(env);
    const finished = await runExecution(
      runnerDeps(env, client, echo),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Best guess: memory leak.",
      forced_conclusion: "max_iterations",
    });

    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => e.eventType)).toEqual([
      "llm_response",
      "llm_tool_call",
      "llm_response",
      "llm_tool_call",
      "final_analysis",
    ]);
    expect(timeline[4]?.metadata).toEqual({
      forced_conclusion: true,
      reason: "max_iterations",
      iterations_used: 2,
      max_iterations: 2,
    });
    const llmRows = await listLLMInteractions(env.db.prisma, {
      executionId: request.execution_id,
    });
    expect(llmRows.map((r) => [r.interactionType, r.iteration])).toEqual([
      ["iteration", 1],
      ["iteration", 2],
      ["forced_conclusion", 3],
    ]);
    expect((llmRows[2]!.llmRequest as { tools: unknown[] }).tools).toEqual([]);
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages.at(-2)?.role).toBe("user");
    expect(messages.at(-2)?.content).toContain("limit of 2 iterations");
    expect(messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Best guess: memory leak.",
    });
  });

  test("an LLM error that repeats fails the execution with the provider's message", async ({
    env,
    llm,
    echo,
  }) => {
    // A provider error is retried once on the same provider; the second one ends the call.
    const { client } = await llm([
      { error: { message: "quota exceeded for project demo-123", code: "rate_limited" } },
      { error: { message: "quota exceeded for project demo-123", code: "rate_limited" } },
    ]);
    const request = await seedExecution(env);
    const finished = await runExecution(
      runnerDeps(env, client, echo),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("failed");
    expect(finished.error).toContain("quota exceeded for project demo-123");
    expect(finished.final_analysis).toBeNull();
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([["error", "completed"]]);
    expect(timeline[0]?.content).toContain("quota exceeded for project demo-123");
    const [row] = await listLLMInteractions(env.db.prisma, { executionId: request.execution_id });
    expect(row?.errorMessage).toContain("quota exceeded for project demo-123");
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution?.status).toBe("failed");
    expect(execution?.errorMessage).toContain("quota exceeded for project demo-123");
  });
});
