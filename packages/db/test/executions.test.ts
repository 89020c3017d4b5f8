import { describe, expect } from "vitest";
import {
  appendMessages,
  ensureExecutiveSummaryExecution,
  ensureStage,
  finishExecutionAttempt,
  getExecution,
  getLLMInteractionDetail,
  getSessionTrace,
  heartbeatExecution,
  listMessages,
  listSessionStages,
  recordExecutionFallback,
  recordLLMInteraction,
  recordMCPInteraction,
  startExecution,
  transitionExecutionStatus,
  transitionStageStatus,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("stages and executions", () => {
  test("creating a stage twice (a redelivered handler) creates it once", async ({ db }) => {
    const session = await newSession(db.prisma);
    const input = {
      sessionId: session.id,
      stageName: "investigate",
      stageIndex: 1,
      parallelType: "replica" as const,
      successPolicy: "any" as const,
    };
    const agents = [1, 2, 3].map((i) => ({ agentName: `KubernetesAgent-${i}`, agentIndex: i }));
    const results = await Promise.all([
      ensureStage(db.prisma, input, agents),
      ensureStage(db.prisma, input, agents),
      ensureStage(db.prisma, input, agents),
    ]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.stage.id)).size).toBe(1);
    const stages = await listSessionStages(db.prisma, session.id);
    expect(stages).toHaveLength(1);
    expect(stages[0]?.expectedAgentCount).toBe(3);
    expect(stages[0]?.executions.map((e) => e.agentName)).toEqual([
      "KubernetesAgent-1",
      "KubernetesAgent-2",
      "KubernetesAgent-3",
    ]);
    expect(results[0]?.executions).toHaveLength(3);
  });

  test("execution lifecycle: start once per attempt, terminal is final", async ({ db }) => {
    const session = await newSession(db.prisma);
    const { stage, executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "s", stageIndex: 1 },
      [{ agentName: "a", agentIndex: 1 }],
    );
    const execution = executions[0]!;
    expect(await transitionStageStatus(db.prisma, stage.id, ["pending"], "active")).toBe(true);
    const started = await startExecution(db.prisma, execution.id, "runner-1");
    expect(started?.status).toBe("active");
    expect(started?.attempt).toBe(1);
    // A redelivery after runner-1 crashed: same execution, next attempt.
    const restarted = await startExecution(db.prisma, execution.id, "runner-2");
    expect(restarted?.attempt).toBe(2);
    expect(restarted?.runnerId).toBe("runner-2");
    expect(restarted?.startedAt).toEqual(started?.startedAt);

    expect(
      await transitionExecutionStatus(db.prisma, execution.id, ["active"], "completed", {
        finalAnalysis: "disk pressure",
        totalTokens: 42,
        completedAt: new Date(),
      }),
    ).toBe(true);
    expect(await transitionExecutionStatus(db.prisma, execution.id, ["active"], "failed")).toBe(
      false,
    );
    expect(await startExecution(db.prisma, execution.id, "runner-3")).toBeNull();
    expect(await heartbeatExecution(db.prisma, execution.id, 2)).toBe(false);
  });

  test("a provider fallback is recorded on the execution; a new attempt starts on the original", async ({
    db,
  }) => {
    const session = await newSession(db.prisma);
    const { executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "s", stageIndex: 1 },
      [{ agentName: "a", agentIndex: 1, llmProvider: "primary", backend: "google-native" }],
    );
    const execution = executions[0]!;
    await startExecution(db.prisma, execution.id, "runner-1");
    const change = { originalProvider: "primary", originalBackend: "google-native" };
    await recordExecutionFallback(db.prisma, execution.id, {
      ...change,
      provider: "backup-1",
      backend: "langchain",
    });
    await recordExecutionFallback(db.prisma, execution.id, {
      ...change,
      provider: "backup-2",
      backend: "langchain",
    });
    expect(await getExecution(db.prisma, execution.id)).toMatchObject({
      llmProvider: "backup-2",
      backend: "langchain",
      originalLlmProvider: "primary",
      originalBackend: "google-native",
    });
    // Redelivered after runner-1 died: the new attempt runs on the configured provider again.
    const restarted = await startExecution(db.prisma, execution.id, "runner-2");
    expect(restarted).toMatchObject({
      attempt: 2,
      llmProvider: "primary",
      backend: "google-native",
      originalLlmProvider: null,
      originalBackend: null,
    });
  });

  test("only the current attempt heartbeats and finishes its execution", async ({ db }) => {
    const session = await newSession(db.prisma);
    const { executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "s", stageIndex: 1 },
      [{ agentName: "a", agentIndex: 1 }],
    );
    const execution = executions[0]!;
    await startExecution(db.prisma, execution.id, "runner-1");
    await startExecution(db.prisma, execution.id, "runner-2");
    // Attempt 1 was superseded by attempt 2 (a redelivery after runner-1 stalled).
    expect(await heartbeatExecution(db.prisma, execution.id, 1)).toBe(false);
    expect(await heartbeatExecution(db.prisma, execution.id, 2)).toBe(true);
    expect(await finishExecutionAttempt(db.prisma, execution.id, 1, "failed")).toBe(false);
    expect(
      await finishExecutionAttempt(db.prisma, execution.id, 2, "completed", {
        finalAnalysis: "done",
      }),
    ).toBe(true);
    expect(await finishExecutionAttempt(db.prisma, execution.id, 2, "failed")).toBe(false);
    expect(await getExecution(db.prisma, execution.id)).toMatchObject({
      status: "completed",
      finalAnalysis: "done",
    });
  });

  test("one executive summary execution per session", async ({ db }) => {
    const session = await newSession(db.prisma);
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        ensureExecutiveSummaryExecution(db.prisma, session.id, { agentName: "ExecutiveSummary" }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.execution.id)).size).toBe(1);
    expect(results[0]?.execution.stageId).toBeNull();
    expect(results[0]?.execution.kind).toBe("executive_summary");
  });
});

describe("messages and interactions", () => {
  test("the conversation is numbered in order and rebuilt for each LLM call", async ({ db }) => {
    const session = await newSession(db.prisma);
    const { stage, executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
      [{ agentName: "KubernetesAgent", agentIndex: 1 }],
    );
    const ref = { sessionId: session.id, stageId: stage.id, executionId: executions[0]!.id };
    const opening = await appendMessages(db.prisma, ref, [
      { role: "system", content: "You are an SRE agent" },
      { role: "user", content: "## Alert Data\npod crashloop" },
    ]);
    const [assistant] = await appendMessages(db.prisma, ref, [
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call-1", name: "kubernetes-server__pods_list", arguments: "{}" }],
      },
    ]);
    const first = await recordLLMInteraction(db.prisma, {
      ...ref,
      interactionType: "iteration",
      modelName: "gemini-2.5-pro",
      lastMessageId: opening[1]!.id,
      toolCalls: [{ id: "call-1", name: "kubernetes-server__pods_list", arguments: "{}" }],
      inputTokens: 100,
      outputTokens: 10,
      totalTokens: 110,
      durationMs: 830,
    });
    // Concurrent appends (e.g. parallel tool results) get distinct numbers.
    await Promise.all(
      ["call-1", "call-2"].map((id) =>
        appendMessages(db.prisma, ref, [
          { role: "tool", content: `result ${id}`, toolCallId: id, toolName: "pods_list" },
        ]),
      ),
    );
    const all = await listMessages(db.prisma, ref.executionId);
    expect(all.map((m) => m.sequenceNumber)).toEqual([1, 2, 3, 4, 5]);
    expect(all[2]?.toolCalls).toEqual([
      { id: "call-1", name: "kubernetes-server__pods_list", arguments: "{}" },
    ]);
    expect(assistant?.sequenceNumber).toBe(3);

    const mcp = await recordMCPInteraction(db.prisma, {
      ...ref,
      interactionType: "tool_call",
      serverName: "kubernetes-server",
      toolName: "pods_list",
      toolArguments: {},
      toolResult: { content: "[MASKED]" },
      durationMs: 12,
    });
    const summary = await recordLLMInteraction(db.prisma, {
      sessionId: session.id,
      interactionType: "executive_summary",
      modelName: "gemini-2.5-pro",
      llmRequest: { messages: [{ role: "user", content: "summarize" }] },
      responseText: "OOM in payments",
    });

    const detail = await getLLMInteractionDetail(db.prisma, session.id, first.id);
    expect(detail?.conversation.map((m) => m.role)).toEqual(["system", "user"]);
    expect(
      await getLLMInteractionDetail(db.prisma, "00000000-0000-0000-0000-000000000000", first.id),
    ).toBeNull();

    const trace = await getSessionTrace(db.prisma, session.id);
    expect(trace.stages).toHaveLength(1);
    expect(trace.stages[0]?.executions[0]?.llmInteractions.map((i) => i.id)).toEqual([first.id]);
    expect(trace.stages[0]?.executions[0]?.mcpInteractions.map((i) => i.id)).toEqual([mcp.id]);
    expect(trace.sessionInteractions.map((i) => i.id)).toEqual([summary.id]);
  });
});
