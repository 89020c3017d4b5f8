import {
  appendMessages,
  createTimelineEvent,
  listMessages,
  listSessionTimeline,
  startExecution,
} from "@tarsy/db";
import type { GenerateInput, LlmClient } from "@tarsy/llm-client";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import { type Env, runnerDeps, seedExecution, runnerTest as test } from "./support.ts";

/**
 * Resuming an interrupted execution, at the runner: an earlier attempt is set up as a runner
 * that died mid-step would leave it (its attempt started, its conversation stored up to the
 * cut, the event of the call it was making still streaming), then the next attempt runs.
 * test/e2e/resume.test.ts kills real runner processes.
 */
function recording(client: LlmClient): {
  llm: Pick<LlmClient, "generate">;
  requests: GenerateInput[];
} {
  const requests: GenerateInput[] = [];
  return {
    requests,
    llm: {
      generate(input, options) {
        requests.push(structuredClone(input));
        return client.generate(input, options);
      },
    },
  };
}

const ECHO_CALL = { id: "c1", name: "everything.echo", arguments: '{"message":"hi"}' };

/** Attempt 1 of the execution, dead after its first turn asked for `ECHO_CALL`. */
async function interruptedAttempt(
  env: Env,
  request: Awaited<ReturnType<typeof seedExecution>>,
  options: { lastTurn?: "tool_call" | "answer"; callRepeated?: boolean } = {},
) {
  await startExecution(env.db.prisma, request.execution_id, "runner-dead");
  const ref = {
    sessionId: request.session_id,
    stageId: request.stage_id,
    executionId: request.execution_id,
  };
  await appendMessages(env.db.prisma, ref, [
    { role: "system", content: "You are an SRE agent." },
    { role: "user", content: "Investigate web-1." },
    options.lastTurn === "answer"
      ? { role: "assistant", content: "web-1 is out of memory." }
      : { role: "assistant", content: "", toolCalls: [ECHO_CALL] },
  ]);
  if (options.lastTurn !== "answer") {
    await createTimelineEvent(env.db.prisma, {
      ...ref,
      eventType: "llm_tool_call",
      status: "streaming",
      content: "",
      metadata: {
        server_name: "everything",
        tool_name: "echo",
        arguments: { message: "hi" },
        call_id: "c1",
        ...(options.callRepeated && { resumed: true }),
      },
    });
  }
}

describe("resuming an interrupted execution", () => {
  test("the cut tool call is made again, then only the rest of the loop: no LLM call is repeated", async ({
    env,
    llm,
    echo,
  }) => {
    const started = await llm([{ text: "Resumed: web-1 echoes hi." }]);
    const { llm: client, requests } = recording(started.client);
    const request = await seedExecution(env);
    await interruptedAttempt(env, request);

    const finished = await runExecution(
      runnerDeps(env, started.client, echo, { llm: client }),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Resumed: web-1 echoes hi.",
    });
    expect(echo.calls.map((c) => c.name)).toEqual(["everything.echo"]);
    // One LLM call: the stored conversation, with the result of the call made again.
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You are an SRE agent."],
      ["user", "Investigate web-1."],
      ["assistant", ""],
      [
        "tool",
        '<untrusted_data source="tool_result" tool="everything.echo">\nEcho: hi\n</untrusted_data>',
      ],
    ]);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(
      timeline.map((e) => [
        e.eventType,
        e.status,
        (e.metadata as { resumed?: boolean } | null)?.resumed,
      ]),
    ).toEqual([
      ["llm_tool_call", "failed", undefined],
      ["execution_resumed", "completed", undefined],
      ["llm_tool_call", "completed", true],
      ["final_analysis", "completed", undefined],
    ]);
    expect(timeline[0]?.metadata).toMatchObject({ interrupted: true, attempt: 1 });
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
  });

  test("a call already made again once (and cut again) is not made a third time; the agent is told", async ({
    env,
    llm,
    echo,
  }) => {
    const started = await llm([{ text: "Not repeating the echo." }]);
    const { llm: client, requests } = recording(started.client);
    const request = await seedExecution(env);
    await interruptedAttempt(env, request, { callRepeated: true });

    const finished = await runExecution(
      runnerDeps(env, started.client, echo, { llm: client }),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("completed");
    expect(echo.calls).toEqual([]);
    const told = requests[0]?.messages.at(-1);
    expect(told).toMatchObject({ role: "tool", toolCallId: "c1" });
    expect(told?.content).toMatch(/^Tool call outcome unknown: .*already run again once/);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(
      timeline.find((e) => e.status === "completed" && e.eventType === "llm_tool_call"),
    ).toMatchObject({ metadata: { not_repeated: "already_repeated", is_error: true } });
  });

  test("a conversation that cannot be continued starts over, and says why", async ({
    env,
    llm,
    echo,
  }) => {
    const started = await llm([{ text: "Answered from the start." }]);
    const { llm: client, requests } = recording(started.client);
    const request = await seedExecution(env);
    await interruptedAttempt(env, request, { lastTurn: "answer" });

    const finished = await runExecution(
      runnerDeps(env, started.client, echo, { llm: client }),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Answered from the start.",
    });
    // The new attempt built its own prompt: the stored one was dropped.
    expect(requests[0]?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(requests[0]?.messages[1]?.content).not.toBe("Investigate web-1.");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.content])).toEqual([
      [
        "execution_resumed",
        "Started over after an interruption: its answer was given but not recorded.",
      ],
      ["final_analysis", "Answered from the start."],
    ]);
    expect(timeline[0]?.metadata).toEqual({
      mode: "restarted",
      attempt: 2,
      reason: "its answer was given but not recorded",
    });
  });

  test("queue.resume_interrupted: false starts over as before, without an event", async ({
    env,
    llm,
    echo,
  }) => {
    const started = await llm([{ text: "Started over." }]);
    const { llm: client, requests } = recording(started.client);
    const request = await seedExecution(env);
    await interruptedAttempt(env, request);
    const config = { ...env.config, queue: { ...env.config.queue, resume_interrupted: false } };

    const finished = await runExecution(
      runnerDeps(env, started.client, echo, { llm: client, config }),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({ status: "completed", final_analysis: "Started over." });
    expect(echo.calls).toEqual([]);
    expect(requests[0]?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["llm_tool_call", "failed"],
      ["final_analysis", "completed"],
    ]);
  });
});
