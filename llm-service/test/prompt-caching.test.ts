/**
 * Prompt caching (ADR-0026) and reasoning effort on the wire: each loopback fake records the
 * HTTP request llm-service sent and answers with the cache usage the real API reports.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicError, anthropicStream } from "./fakes/anthropic.ts";
import { geminiChunk, geminiUsage } from "./fakes/gemini.ts";
import { type FakeProvider, respondJson, respondSse, startFakeProvider } from "./fakes/http.ts";
import { openAiError, openAiStream } from "./fakes/openai.ts";
import { baseInput, collect, type Harness, POD_TOOL, startHarness, usageOf } from "./harness.ts";

const EVENTS_TOOL = {
  name: "kubernetes-server.events_list",
  description: "List events in a namespace",
  parameters: { type: "object", properties: { namespace: { type: "string" } } },
};
const LOOP_MESSAGES = [
  { role: "system" as const, content: "You are an SRE agent." },
  { role: "user" as const, content: "Alert: pod crash looping in prod." },
  {
    role: "assistant" as const,
    content: "",
    toolCalls: [{ id: "call_1", name: "kubernetes-server.pods_list", arguments: "{}" }],
  },
  {
    role: "tool" as const,
    content: "pod-a CrashLoopBackOff",
    toolCallId: "call_1",
    toolName: "kubernetes-server.pods_list",
  },
];

let fake: FakeProvider;
let h: Harness;
const body = (i = 0) => fake.requests[i]?.body as Record<string, unknown>;

beforeAll(async () => {
  fake = await startFakeProvider();
  h = await startHarness({ KEY: "sk-test-key-0123456789" });
});
afterAll(async () => {
  await h.stop();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

const anthropic = (over: Record<string, unknown> = {}) => ({
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  apiKeyEnv: "KEY",
  baseUrl: `${fake.url}/v1`,
  ...over,
});
const openai = (model: string, over: Record<string, unknown> = {}) => ({
  provider: "openai",
  model,
  apiKeyEnv: "KEY",
  baseUrl: `${fake.url}/v1`,
  ...over,
});

describe("Anthropic: cache_control on the last tool", () => {
  it("marks only the last tool schema (1h) when prompt_cache is set; usage keeps uncached input apart", async () => {
    fake.enqueue(
      respondSse(
        anthropicStream({
          text: ["ok"],
          usage: { input: 120, output: 30, cacheRead: 4000, cacheCreation: 0 },
        }),
      ),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(anthropic(), {
          messages: LOOP_MESSAGES,
          tools: [POD_TOOL, EVENTS_TOOL],
          promptCache: true,
        }),
      ),
    );
    const sent = body() as {
      tools: Record<string, unknown>[];
      system: Record<string, unknown>[];
      messages: { content: Record<string, unknown>[] }[];
    };
    expect(sent.tools[1]?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(sent.tools[0]?.cache_control).toBeUndefined();
    // Nothing else carries a breakpoint (ADR-0026 Q4).
    const marked = JSON.stringify(sent).match(/cache_control/g) ?? [];
    expect(marked).toHaveLength(1);
    expect(usageOf(chunks)).toMatchObject({
      inputTokens: 120,
      outputTokens: 30,
      cacheReadTokens: 4000,
      cacheCreationTokens: 0,
    });
  });

  it("sends no cache_control when prompt_cache is off, and still reports a cache write", async () => {
    fake.enqueue(
      respondSse(
        anthropicStream({
          text: ["ok"],
          usage: { input: 50, output: 5, cacheRead: 0, cacheCreation: 900 },
        }),
      ),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(anthropic(), { messages: LOOP_MESSAGES, tools: [POD_TOOL, EVENTS_TOOL] }),
      ),
    );
    expect(JSON.stringify(body())).not.toContain("cache_control");
    expect(usageOf(chunks)).toMatchObject({
      inputTokens: 50,
      cacheReadTokens: 0,
      cacheCreationTokens: 900,
    });
  });

  it("a 400 on the markers: the same call without the 1h ttl, then without any marker", async () => {
    const refused = respondJson(400, anthropicError("invalid_request_error", "ttl not allowed"));
    fake.enqueue(
      refused,
      refused,
      respondSse(anthropicStream({ text: ["answered"], usage: { input: 10, output: 2 } })),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(anthropic(), { tools: [POD_TOOL, EVENTS_TOOL], promptCache: true }),
      ),
    );
    expect(chunks.filter((c) => c.type === "text").map((c) => c.content)).toEqual(["answered"]);
    const lastTool = (i: number) => (body(i) as { tools: Record<string, unknown>[] }).tools[1];
    expect(lastTool(0)?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(lastTool(1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(JSON.stringify(body(2))).not.toContain("cache_control");
    expect(fake.requests).toHaveLength(3);
  });

  it("a 400 without markers is the caller's error, not retried", async () => {
    fake.enqueue(respondJson(400, anthropicError("invalid_request_error", "bad request")));
    const chunks = await collect(
      h.client.generate(baseInput(anthropic(), { tools: [POD_TOOL, EVENTS_TOOL] })),
    );
    expect(chunks.find((c) => c.type === "error")).toMatchObject({ retryable: false });
    expect(fake.requests).toHaveLength(1);
  });

  it("sends reasoning_effort as output_config.effort", async () => {
    fake.enqueue(respondSse(anthropicStream({ text: ["ok"], usage: { input: 1, output: 1 } })));
    await collect(h.client.generate(baseInput(anthropic({ reasoningEffort: "max" }))));
    expect(body().output_config).toEqual({ effort: "max" });
  });
});

describe("OpenAI: prompt_cache_key and explicit breakpoints", () => {
  type ChatBody = {
    prompt_cache_key?: string;
    prompt_cache_options?: unknown;
    reasoning_effort?: string;
    messages: { role: string; content: unknown }[];
  };
  const breakpoints = (b: ChatBody) =>
    b.messages.flatMap((m, i) =>
      Array.isArray(m.content) &&
      m.content.some((part: { prompt_cache_breakpoint?: unknown }) => part.prompt_cache_breakpoint)
        ? [`${i}:${m.role}`]
        : [],
    );

  it("GPT-5.6+ loop call: explicit 30m mode, key = execution id, breakpoints on system, first user, last tool result; cached and written tokens apart from input", async () => {
    fake.enqueue(
      respondSse(
        openAiStream({
          text: ["ok"],
          usage: { prompt: 5000, completion: 40, cached: 4000, cacheWrite: 600 },
        }),
      ),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(openai("gpt-5.6-sol"), {
          executionId: "exec-42",
          messages: LOOP_MESSAGES,
          tools: [POD_TOOL],
          promptCache: true,
        }),
      ),
    );
    const sent = body() as ChatBody;
    expect(sent.prompt_cache_key).toBe("exec-42");
    expect(sent.prompt_cache_options).toEqual({ mode: "explicit", ttl: "30m" });
    expect(breakpoints(sent)).toEqual(["0:developer", "1:user", "3:tool"]);
    expect(usageOf(chunks)).toMatchObject({
      inputTokens: 400,
      cacheReadTokens: 4000,
      cacheCreationTokens: 600,
      totalTokens: 5040,
    });
  });

  it("GPT-5.6+ with prompt_cache off: explicit mode (no implicit write) but no breakpoint", async () => {
    fake.enqueue(respondSse(openAiStream({ text: ["ok"], usage: { prompt: 10, completion: 1 } })));
    await collect(
      h.client.generate(
        baseInput(openai("gpt-5.6-sol"), {
          executionId: "exec-42",
          messages: LOOP_MESSAGES,
          tools: [POD_TOOL],
        }),
      ),
    );
    const sent = body() as ChatBody;
    expect(sent.prompt_cache_options).toEqual({ mode: "explicit", ttl: "30m" });
    expect(breakpoints(sent)).toEqual([]);
    expect(JSON.stringify(sent)).not.toContain("prompt_cache_breakpoint");
  });

  it("older models: prompt_cache_key only on loop calls, nothing when off; cached_tokens read", async () => {
    fake.enqueue(
      respondSse(
        openAiStream({ text: ["ok"], usage: { prompt: 3000, completion: 9, cached: 2048 } }),
      ),
      respondSse(openAiStream({ text: ["ok"], usage: { prompt: 10, completion: 1 } })),
    );
    const loop = await collect(
      h.client.generate(
        baseInput(openai("gpt-4.1"), {
          executionId: "exec-7",
          messages: LOOP_MESSAGES,
          promptCache: true,
        }),
      ),
    );
    await collect(
      h.client.generate(
        baseInput(openai("gpt-4.1"), { executionId: "exec-7", messages: LOOP_MESSAGES }),
      ),
    );
    expect((body(0) as ChatBody).prompt_cache_key).toBe("exec-7");
    expect(JSON.stringify(body(0))).not.toContain("prompt_cache_options");
    expect(JSON.stringify(body(1))).not.toContain("prompt_cache");
    expect(usageOf(loop)).toMatchObject({ inputTokens: 952, cacheReadTokens: 2048 });
  });

  it("a 400 on the explicit cache fields: the same call without any of them", async () => {
    fake.enqueue(
      respondJson(400, openAiError("invalid_request_error", "Unrecognized prompt_cache_options")),
      respondSse(openAiStream({ text: ["ok"], usage: { prompt: 10, completion: 1 } })),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(openai("gpt-5.6-sol"), {
          executionId: "exec-9",
          messages: LOOP_MESSAGES,
          promptCache: true,
        }),
      ),
    );
    expect(chunks.some((c) => c.type === "text")).toBe(true);
    expect(JSON.stringify(body(0))).toContain("prompt_cache_breakpoint");
    expect(JSON.stringify(body(1))).not.toContain("prompt_cache");
  });

  it("a 400 when only prompt_cache_key was sent is the caller's error, not retried", async () => {
    fake.enqueue(respondJson(400, openAiError("invalid_request_error", "bad request")));
    const chunks = await collect(
      h.client.generate(baseInput(openai("gpt-4.1"), { executionId: "exec-3", promptCache: true })),
    );
    expect(chunks.find((c) => c.type === "error")).toMatchObject({ retryable: false });
    expect(fake.requests).toHaveLength(1);
  });

  it("sends reasoning_effort in OpenAI's reasoning_effort and xAI's", async () => {
    fake.enqueue(
      respondSse(openAiStream({ text: ["ok"], usage: { prompt: 1, completion: 1 } })),
      respondSse(openAiStream({ text: ["ok"], usage: { prompt: 1, completion: 1 } })),
    );
    await collect(h.client.generate(baseInput(openai("gpt-5.1", { reasoningEffort: "low" }))));
    await collect(
      h.client.generate(
        baseInput({
          provider: "xai",
          model: "grok-4.3",
          apiKeyEnv: "KEY",
          baseUrl: `${fake.url}/v1`,
          reasoningEffort: "high",
        }),
      ),
    );
    expect((body(0) as ChatBody).reasoning_effort).toBe("low");
    expect((body(1) as ChatBody).reasoning_effort).toBe("high");
  });
});

describe("Gemini: the implicit cache is measured", () => {
  type GeminiBody = { generationConfig?: { thinkingConfig?: Record<string, unknown> } };
  const gemini = (backend: string, over: Record<string, unknown> = {}) => ({
    provider: "google",
    backend,
    model: "gemini-3-pro-preview",
    apiKeyEnv: "KEY",
    baseUrl: backend === "google-native" ? fake.url : `${fake.url}/v1beta`,
    ...over,
  });
  const answer = () =>
    respondSse([
      geminiChunk([{ text: "ok" }], {
        finishReason: "STOP",
        usage: geminiUsage(3500, 20, 10, 3000),
      }),
    ]);

  it("google-native: cachedContentTokenCount is cache read, input the rest; no request marker", async () => {
    fake.enqueue(answer());
    const chunks = await collect(
      h.client.generate(
        baseInput(gemini("google-native"), { messages: LOOP_MESSAGES, promptCache: true }),
      ),
    );
    expect(usageOf(chunks)).toMatchObject({
      inputTokens: 500,
      cacheReadTokens: 3000,
      cacheCreationTokens: 0,
    });
    expect(JSON.stringify(body())).not.toMatch(/cache/i);
  });

  it("langchain: cachedContentTokenCount is cache read, input the rest", async () => {
    fake.enqueue(answer());
    const chunks = await collect(
      h.client.generate(baseInput(gemini("langchain"), { messages: LOOP_MESSAGES })),
    );
    expect(usageOf(chunks)).toMatchObject({ inputTokens: 500, cacheReadTokens: 3000 });
  });

  it("reasoning_effort becomes the thinking level (xhigh and max as high) on both backends", async () => {
    fake.enqueue(answer(), answer(), answer());
    await collect(
      h.client.generate(baseInput(gemini("google-native", { reasoningEffort: "xhigh" }))),
    );
    await collect(h.client.generate(baseInput(gemini("langchain", { reasoningEffort: "medium" }))));
    // An explicit thinking_level wins over the effort.
    await collect(
      h.client.generate(
        baseInput(gemini("google-native", { reasoningEffort: "low", thinkingLevel: "high" })),
      ),
    );
    expect((body(0) as GeminiBody).generationConfig?.thinkingConfig).toMatchObject({
      thinkingLevel: "HIGH",
    });
    expect((body(1) as GeminiBody).generationConfig?.thinkingConfig).toMatchObject({
      thinkingLevel: "medium",
    });
    expect((body(2) as GeminiBody).generationConfig?.thinkingConfig).toMatchObject({
      thinkingLevel: "HIGH",
    });
  });
});
