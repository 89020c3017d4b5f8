import {
  listLLMInteractions,
  listMCPInteractions,
  listMessages,
  listSessionTimeline,
} from "@tarsy/db";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import type { ToolScope } from "../src/ports.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import {
  createEnv,
  firstLLMInteraction,
  runnerDeps,
  seedExecution,
  runnerTest as test,
} from "./support.ts";

const never = new AbortController().signal;

describe("execution kinds", () => {
  test("synthesis is one tool-less call over the investigations, ending in a final analysis", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([{ text: "Combined: OOM caused by a leak." }]);
    const request = await seedExecution(env, {
      kind: "synthesis",
      stageName: "parallel - Synthesis",
      context: "Agent 1 says OOM. Agent 2 says leak.",
    });
    const finished = await runExecution(runnerDeps(env, client, echo), request, never);
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Combined: OOM caused by a leak.",
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([["final_analysis", "completed"]]);
    const [row] = await listLLMInteractions(env.db.prisma, { executionId: request.execution_id });
    if (!row) throw new Error("no LLM interaction");
    expect(row.interactionType).toBe("synthesis");
    expect((row.llmRequest as { tools: unknown[] }).tools).toEqual([]);
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages[1]?.content).toContain("Agent 1 says OOM. Agent 2 says leak.");
    expect(await listMCPInteractions(env.db.prisma, { sessionId: request.session_id })).toEqual([]);
  });

  test("chat uses the same loop with chat prompting and answers as chat_response", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([
      { tool_calls: [{ id: "c1", name: "everything.echo", arguments: { message: "restarts" } }] },
      { text: "It restarted because of OOM." },
    ]);
    const request = await seedExecution(env, {
      kind: "chat",
      stageName: "Chat Response",
      context: "Final analysis: OOM.",
      question: "Why did it restart?",
    });
    const finished = await runExecution(runnerDeps(env, client, echo), request, never);
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "It restarted because of OOM.",
    });
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages[0]?.content).toContain("## Follow-up Chat Instructions");
    expect(messages[1]?.content).toContain("Final analysis: OOM.");
    expect(messages[1]?.content).toContain("Why did it restart?");
    const rows = await listLLMInteractions(env.db.prisma, { executionId: request.execution_id });
    expect(rows.map((r) => r.interactionType)).toEqual(["iteration", "chat_response"]);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => e.eventType)).toEqual(["llm_tool_call", "final_analysis"]);
  });

  test("the executive summary is a session-level event from one tool-less call", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([{ text: "Pods crashed from OOM; raise the memory limit." }]);
    const request = await seedExecution(env, {
      kind: "executive_summary",
      context: "Root cause: OOM. Fix: raise limits.",
    });
    const finished = await runExecution(runnerDeps(env, client, echo), request, never);
    expect(finished).toMatchObject({
      status: "completed",
      stage_id: null,
      final_analysis: "Pods crashed from OOM; raise the memory limit.",
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status, e.stageId, e.executionId])).toEqual([
      ["executive_summary", "completed", null, null],
    ]);
    const row = await firstLLMInteraction(env, request.session_id);
    expect(row).toMatchObject({ interactionType: "executive_summary", stageId: null });
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages[1]?.content).toContain("Root cause: OOM. Fix: raise limits.");
  });
});

describe("events of the loop", () => {
  test("code executions become their own timeline events", async ({ env, llm, echo }) => {
    const { client } = await llm([
      { code_executions: [{ code: "print(2 + 2)", result: "4" }], text: "The sum is 4." },
    ]);
    const request = await seedExecution(env);
    await runExecution(runnerDeps(env, client, echo), request, never);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["code_execution", "completed"],
      ["final_analysis", "completed"],
    ]);
    expect(timeline[0]?.metadata).toEqual({ code: "print(2 + 2)", result: "4" });
  });

  test("large tool results are stored truncated to 8K tokens while the summarizer sees them whole", async ({
    env,
    llm,
  }) => {
    const big = new StandInGateway({ dump: () => "a".repeat(40_000) });
    const { client } = await llm([
      { match: { system: "summarizing technical output" }, text: "SUMMARY: only a's." },
      { tool_calls: [{ id: "d1", name: "everything.dump", arguments: {} }] },
      { text: "done" },
    ]);
    const request = await seedExecution(env);
    await runExecution(runnerDeps(env, client, big), request, never);
    const call = (await listSessionTimeline(env.db.prisma, request.session_id)).find(
      (e) => e.eventType === "llm_tool_call",
    );
    expect(call?.content.startsWith("a".repeat(32_000))).toBe(true);
    expect(call?.content).toContain("[TRUNCATED: stored result cut at 8000 tokens");
    expect(call?.content.length).toBeLessThan(32_200);
    const mcp = (await listMCPInteractions(env.db.prisma, { sessionId: request.session_id })).find(
      (i) => i.interactionType === "tool_call",
    );
    if (!mcp) throw new Error("no tool_call interaction");
    expect((mcp.toolResult as { content: string }).content).toBe(call?.content);
    const summarization = await firstLLMInteraction(env, request.session_id, "summarization");
    expect(JSON.stringify(summarization.llmRequest)).toContain("a".repeat(40_000));
  });

  test("servers that failed to start are recorded and named to the LLM", async ({ env, llm }) => {
    const broken = new StandInGateway({});
    broken.listTools = async (_scope: ToolScope) => ({
      tools: [],
      failedServers: { everything: "spawn node ENOENT" },
    });
    const { client } = await llm([{ text: "No tools; concluding from the alert." }]);
    const request = await seedExecution(env);
    const finished = await runExecution(runnerDeps(env, client, broken), request, never);
    expect(finished.status).toBe("completed");
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages[0]?.content).toContain("- **everything**: spawn node ENOENT");
    const [list] = await listMCPInteractions(env.db.prisma, { sessionId: request.session_id });
    expect(list).toMatchObject({ interactionType: "tool_list", errorMessage: "spawn node ENOENT" });
  });

  test("parallel agents of one session never collide on timeline sequence numbers", async ({
    env,
    llm,
    echo,
  }) => {
    const call = (id: string) => ({
      text: `step ${id}`,
      tool_calls: [{ id, name: "everything.echo", arguments: { message: id } }],
    });
    const { client } = await llm([
      call("a"),
      call("b"),
      call("c"),
      call("d"),
      { text: "x" },
      { text: "y" },
    ]);
    const request = await seedExecution(env, { stageName: "parallel", agents: 2 });
    const [first, second] = request.executions;
    const deps = runnerDeps(env, client, echo);
    const results = await Promise.all([
      runExecution(deps, request, never),
      runExecution(deps, { ...request, execution_id: second!, agent_index: 2 }, never),
    ]);
    expect(results.map((r) => r.status)).toEqual(["completed", "completed"]); // wire-literal: expected outcome
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    const numbers = timeline.map((e) => e.sequenceNumber);
    expect(numbers).toEqual(Array.from({ length: timeline.length }, (_, i) => i + 1));
    expect(new Set(timeline.map((e) => e.executionId))).toEqual(new Set([first, second]));
  });

  test("orchestration overhead per iteration with an instant LLM", async ({ env, llm, echo }) => {
    const iterations = 10;
    const script = [
      ...Array.from({ length: iterations - 1 }, (_, i) => ({
        text: `step ${i}`,
        tool_calls: [{ id: `t${i}`, name: "everything.echo", arguments: { message: `${i}` } }],
      })),
      { text: "done" },
    ];
    await env.cleanup();
    env = await createEnv({ maxIterations: iterations });
    const { client } = await llm(script);
    const warm = await seedExecution(env);
    await runExecution(runnerDeps(env, client, echo), warm, never).catch(() => undefined);
    const request = await seedExecution(env);
    const started = performance.now();
    const finished = await runExecution(runnerDeps(env, client, echo), request, never);
    const totalMs = performance.now() - started;
    expect(finished.status).toBe("completed");
    const rows = await listLLMInteractions(env.db.prisma, { executionId: request.execution_id });
    const llmMs = rows.reduce((sum, r) => sum + (r.durationMs ?? 0), 0);
    const perIteration = (totalMs - llmMs) / iterations;
    console.info(
      `runner overhead: ${totalMs.toFixed(0)} ms total, ${llmMs} ms in LLM calls, ` +
        `${perIteration.toFixed(1)} ms per iteration (timeline, messages, interactions, events)`,
    );
    expect(rows).toHaveLength(iterations);
    // Generous: the shared 2-core machine runs other suites at once (idle it is far lower).
    expect(perIteration).toBeLessThan(500);
  });
});
