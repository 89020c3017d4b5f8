import { listSessionTimeline } from "@tarsy/db";
import { describe, expect, test } from "vitest";
import { geminiChunk, geminiError, geminiUsage } from "../../../llm-service/test/fakes/gemini.ts";
import { respondJson, respondSse } from "../../../llm-service/test/fakes/http.ts";
import { openAiError, openAiStream } from "../../../llm-service/test/fakes/openai.ts";
import {
  answer,
  badRequest,
  echo,
  env,
  execution,
  fakes,
  fallbackEvents,
  run,
  unauthorized,
  useFallbackRig,
} from "./fallback-rig.ts";

/**
 * Fallback at run time (ADR-0027, ADR-0030): the conversation a fallback provider is sent,
 * spend-cap 429s, and tool-result summaries on their own model and list.
 */
useFallbackRig();

type OpenAiBody = {
  messages: {
    role: string;
    content: unknown;
    tool_calls?: { function: { name: string } }[];
    tool_call_id?: string;
  }[];
};
const bodyOf = (name: keyof typeof fakes, index: number) =>
  fakes[name].requests[index]?.body as OpenAiBody;

const toolCall = (message: string) =>
  respondSse(
    openAiStream({
      toolCalls: [{ id: "c1", name: "everything__echo", arguments: JSON.stringify({ message }) }],
      usage: { prompt: 3, completion: 2 },
    }),
  );

describe("what a fallback provider is sent", () => {
  test("after a tool call, the new provider gets the call and its result; no provider error reaches a prompt", async () => {
    // One provider error first (retried on primary), then the tool call, then bad credentials.
    fakes.primary.enqueue(badRequest, toolCall("hi"), unauthorized);
    fakes.backup1.enqueue(answer("Done on backup1 with the echo."));
    const { request, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Done on backup1 with the echo." });
    expect(fakes.primary.requests).toHaveLength(3);
    // The retry on primary sent the same conversation, without the error of the first try.
    expect(JSON.stringify(bodyOf("primary", 1))).not.toContain("model overloaded");
    expect(bodyOf("primary", 1).messages).toEqual(bodyOf("primary", 0).messages);
    // backup1 continues the same conversation: the assistant's tool call and the tool result.
    const messages = bodyOf("backup1", 0).messages;
    const call = messages.find((m) => m.role === "assistant" && m.tool_calls);
    expect(call?.tool_calls?.[0]?.function.name).toBe("everything__echo");
    expect(messages.find((m) => m.role === "tool")).toMatchObject({
      tool_call_id: "c1",
      content: expect.stringContaining("Echo: hi"),
    });
    // Neither provider's error text is in what the fallback provider was sent.
    const sent = JSON.stringify(bodyOf("backup1", 0));
    expect(sent).not.toContain("Incorrect API key");
    expect(sent).not.toContain("model overloaded");
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { original_provider: "primary", fallback_provider: "backup1", trigger: "immediate" },
    ]);
  });
});

describe("reasoning continuity across a switch", () => {
  type GeminiBody = { contents: { role: string; parts: Record<string, unknown>[] }[] };
  const modelTurn = (body: unknown) =>
    (body as GeminiBody).contents.find((c) => c.role === "model")?.parts ?? [];
  const SIGNATURE = "c2lnbmVkLWJ5LWdlbWluaS1mYWtl";

  test("the fallback provider gets the tool call and its result, not the thought signature only the first model can verify", async () => {
    const call = {
      functionCall: { name: "everything__echo", args: { message: "hi" } },
      thoughtSignature: SIGNATURE,
    };
    fakes.gemini.enqueue(
      respondSse([geminiChunk([call], { finishReason: "STOP", usage: geminiUsage(5, 4, 0) })]),
      respondJson(401, geminiError(401, "UNAUTHENTICATED", "API key not valid")),
    );
    fakes.gemini2.enqueue(
      respondSse([
        geminiChunk([{ text: "Done on gemini2 with the echo." }], {
          finishReason: "STOP",
          usage: geminiUsage(9, 6, 0),
        }),
      ]),
    );
    const { request, finished } = await run({ stageName: "signed" });
    expect(finished).toMatchObject({ final_analysis: "Done on gemini2 with the echo." });
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { original_provider: "gemini", fallback_provider: "gemini2", trigger: "immediate" },
    ]);
    // The model that produced the signature was sent it back with its call.
    expect(fakes.gemini.requests).toHaveLength(2);
    expect(modelTurn(fakes.gemini.requests[1]?.body)).toEqual([call]);
    // The fallback continues the same conversation (the call, then its result), without it.
    const sent = fakes.gemini2.requests[0]?.body;
    expect(modelTurn(sent)).toEqual([
      { functionCall: { name: "everything__echo", args: { message: "hi" } } },
    ]);
    expect(JSON.stringify(sent)).toContain("Echo: hi");
    expect(JSON.stringify(sent)).not.toContain(SIGNATURE);
  });
});

describe("walking a list", () => {
  test("a named list's walk never returns to a provider the execution already left", async () => {
    // The stage's list is backup1, primary, backup2: primary was tried first, so it is skipped.
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(unauthorized);
    fakes.backup2.enqueue(answer("Answered by backup2."));
    const { request, finished } = await run({ stageName: "revisit" });
    expect(finished).toMatchObject({ final_analysis: "Answered by backup2." });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { original_provider: "primary", fallback_provider: "backup1", attempt: 1 },
      { original_provider: "backup1", fallback_provider: "backup2", attempt: 3 },
    ]);
  });

  test("a success resets the error streak: two provider errors that are not in a row do not switch", async () => {
    fakes.primary.enqueue(badRequest, toolCall("hi"), badRequest, answer("Still on primary."));
    const { request, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Still on primary." });
    expect(fakes.primary.requests).toHaveLength(4);
    expect(fakes.backup1.requests).toHaveLength(0);
    expect(await fallbackEvents(request.session_id)).toEqual([]);
  });
});

describe("spend-cap 429", () => {
  test("falls back at once: the provider saw exactly one request, no retry", async () => {
    fakes.primary.enqueue(
      respondJson(
        429,
        openAiError(
          "insufficient_quota",
          "You exceeded your current quota, check your plan and billing details.",
        ),
      ),
    );
    fakes.backup1.enqueue(answer("Answered by backup1."));
    const { request, executionId, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Answered by backup1." });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      {
        original_provider: "primary",
        fallback_provider: "backup1",
        trigger: "immediate",
        reason: expect.stringContaining("quota"),
      },
    ]);
    expect(await execution(executionId)).toMatchObject({ llmProvider: "backup1" });
  });
});

describe("tool-result summaries", () => {
  test("use the server's summarization model; a failure walks defaults.summarization's list, never moving the investigator", async () => {
    const big = `payments-api log line ${"x".repeat(2_000)}`;
    fakes.primary.enqueue(toolCall(big), answer("Final answer from primary."));
    fakes.other.enqueue(unauthorized);
    fakes.backup2.enqueue(answer("SUMMARY: the log is all x."));
    const { request, executionId, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Final answer from primary." });
    // The summary was asked of `other` (the server's model), then of `summaries`' backup2.
    expect(fakes.other.requests).toHaveLength(1);
    expect(JSON.stringify(bodyOf("other", 0))).toContain("summariz");
    expect(fakes.backup2.requests).toHaveLength(1);
    expect(fakes.backup1.requests).toHaveLength(0);
    // The investigator stayed on primary, and its next call carried the summary.
    expect(fakes.primary.requests).toHaveLength(2);
    const result = bodyOf("primary", 1).messages.find((m) => m.role === "tool");
    expect(result?.content).toEqual(expect.stringContaining("SUMMARY: the log is all x."));
    expect(result?.content).not.toEqual(expect.stringContaining("Echo: payments-api"));
    expect(await fallbackEvents(request.session_id)).toEqual([]);
    // No provider change was recorded on the execution.
    expect(await execution(executionId)).toMatchObject({
      llmProvider: null,
      originalLlmProvider: null,
    });
    const summary = (await listSessionTimeline(env.db.prisma, request.session_id)).find(
      (e) => e.eventType === "mcp_tool_summary",
    );
    expect(summary?.metadata).toMatchObject({ summarization_fallback: true, provider: "backup2" });
    expect(echo.calls.at(-1)?.name).toBe("everything.echo");
  });
});
