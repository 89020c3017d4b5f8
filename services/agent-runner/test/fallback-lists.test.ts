import { listLLMInteractions } from "@tarsy/db";
import { describe, expect, test } from "vitest";
import { geminiChunk, geminiUsage } from "../../../llm-service/test/fakes/gemini.ts";
import { respondSse } from "../../../llm-service/test/fakes/http.ts";
import { openAiStream } from "../../../llm-service/test/fakes/openai.ts";
import { runExecution } from "../src/execution.ts";
import {
  answer,
  badRequest,
  client,
  cutAfter,
  echo,
  env,
  execution,
  fakes,
  fallbackCount,
  fallbackEvents,
  POLICY,
  run,
  unauthorized,
  useFallbackRig,
} from "./fallback-rig.ts";
import { runnerDeps, seedExecution } from "./support.ts";

/** Fallback lists: cascades, exhaustion, `[]`, stickiness, parallel agents, single-shot kinds. */
useFallbackRig();

describe("fallback lists", () => {
  test("a cascade over two fallbacks; the execution keeps the provider it started with", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(unauthorized);
    fakes.backup2.enqueue(answer("Second backup answered."));
    const { request, executionId, finished, metrics } = await run();
    expect(finished).toMatchObject({ final_analysis: "Second backup answered." });
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { original_provider: "primary", fallback_provider: "backup1", attempt: 1 },
      { original_provider: "backup1", fallback_provider: "backup2", attempt: 2 },
    ]);
    expect(await execution(executionId)).toMatchObject({
      llmProvider: "backup2",
      originalLlmProvider: "primary",
    });
    expect(await fallbackCount(metrics)).toHaveLength(2);
  });

  test("the switch is sticky: later calls of the execution stay on the fallback", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(
      respondSse(
        openAiStream({
          toolCalls: [{ id: "c1", name: "everything__echo", arguments: '{"message":"hi"}' }],
          usage: { prompt: 3, completion: 2 },
        }),
      ),
      answer("Done after the tool."),
    );
    const { finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Done after the tool." });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(fakes.backup1.requests).toHaveLength(2);
    expect(echo.calls.at(-1)?.name).toBe("everything.echo");
  });

  test("all providers exhausted: the execution fails with the last provider's error", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(unauthorized);
    fakes.backup2.enqueue(unauthorized);
    const { request, finished } = await run();
    expect(finished.status).toBe("failed");
    expect(finished.error).toContain("HTTP 401");
    expect(await fallbackEvents(request.session_id)).toHaveLength(2);
    expect(fakes.backup2.requests).toHaveLength(1);
  });

  test("a fallback records the original reasoning effort; each call sends and stores its own", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(answer("The backup answered."));
    const { request, executionId, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "The backup answered." });
    // Each provider got its own effort in OpenAI's reasoning_effort.
    const sentEffort = (fake: (typeof fakes)["primary"]) =>
      (fake.requests[0]?.body as { reasoning_effort?: string } | undefined)?.reasoning_effort;
    expect(sentEffort(fakes.primary)).toBe("low");
    expect(sentEffort(fakes.backup1)).toBe("medium");
    expect(await execution(executionId)).toMatchObject({
      llmProvider: "backup1",
      originalLlmProvider: "primary",
      reasoningEffort: "medium",
      originalReasoningEffort: "low",
    });
    const interactions = await listLLMInteractions(env.db.prisma, {
      sessionId: request.session_id,
    });
    expect(interactions.map((i) => [i.provider, i.reasoningEffort])).toEqual([
      ["backup1", "medium"],
    ]);
  });

  test("without a fallback the execution records its effort and no original", async () => {
    fakes.primary.enqueue(answer("The primary answered."));
    const { executionId } = await run();
    expect(await execution(executionId)).toMatchObject({
      originalLlmProvider: null,
      reasoningEffort: "low",
      originalReasoningEffort: null,
    });
  });

  test("`fallback_providers: []` turns fallback off for a stage", async () => {
    fakes.primary.enqueue(unauthorized);
    const { request, finished } = await run({ stageName: "no-fallback" });
    expect(finished.status).toBe("failed");
    expect(await fallbackEvents(request.session_id)).toEqual([]);
    expect(fakes.backup1.requests).toHaveLength(0);
  });

  test("parallel agents: only the one whose provider fails falls back", async () => {
    fakes.primary.enqueue(answer("Agent one on the primary."));
    fakes.other.enqueue(unauthorized);
    fakes.backup1.enqueue(answer("Agent two on the backup."));
    const request = await seedExecution(env, { stageName: "parallel", agents: 2 });
    const deps = runnerDeps(env, client, echo, { llmRetry: POLICY });
    const [one, two] = await Promise.all(
      request.executions.map((id, index) =>
        runExecution(
          deps,
          { ...request, execution_id: id, agent_index: index + 1 },
          new AbortController().signal,
        ),
      ),
    );
    expect(one).toMatchObject({ final_analysis: "Agent one on the primary." });
    expect(two).toMatchObject({ final_analysis: "Agent two on the backup." });
    const [first, second] = request.executions as [string, string];
    expect(await fallbackEvents(request.session_id, first)).toEqual([]);
    expect(await fallbackEvents(request.session_id, second)).toMatchObject([
      { original_provider: "other", fallback_provider: "backup1" },
    ]);
    expect((await execution(first)).originalLlmProvider).toBeNull();
    expect((await execution(second)).originalLlmProvider).toBe("other");
  });

  test("an agent that needs Gemini native tools skips entries that cannot serve them", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.gemini.enqueue(
      respondSse([
        geminiChunk([{ text: "Searched the web: known issue." }], {
          finishReason: "STOP",
          usage: geminiUsage(5, 4, 0),
        }),
      ]),
    );
    const { request, executionId, finished } = await run({ stageName: "search" });
    expect(finished).toMatchObject({ final_analysis: "Searched the web: known issue." });
    expect(fakes.backup1.requests).toHaveLength(0);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      {
        fallback_provider: "gemini",
        fallback_backend: "google-native",
        attempt: 2,
        skipped_incompatible: ["backup1"],
      },
    ]);
    // The native tools went with the agent to the Gemini fallback.
    expect(JSON.stringify(fakes.gemini.requests[0]?.body)).toContain("googleSearch");
    expect((await execution(executionId)).backend).toBe("google-native");
  });
});

describe("single-shot kinds", () => {
  test("the executive summary falls back after one provider error", async () => {
    fakes.primary.enqueue(badRequest);
    fakes.backup1.enqueue(answer("Summary from the backup."));
    const { request, finished } = await run({
      kind: "executive_summary",
      context: "The pod was OOMKilled.",
    });
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Summary from the backup.",
    });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { trigger: "provider_errors", fallback_provider: "backup1" },
    ]);
  });

  test("synthesis falls back after one cut stream", async () => {
    fakes.primary.enqueue(cutAfter("Half a synthesis"));
    fakes.backup1.enqueue(answer("Synthesis from the backup."));
    const { finished } = await run({
      kind: "synthesis",
      stageName: "parallel",
      context: "Agent one said A. Agent two said B.",
    });
    expect(finished).toMatchObject({ final_analysis: "Synthesis from the backup." });
    expect(fakes.primary.requests).toHaveLength(1);
  });
});
