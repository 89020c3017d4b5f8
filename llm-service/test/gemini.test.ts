import { LlmCancelledError } from "@tarsy/llm-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { geminiChunk, geminiError, geminiUsage } from "./fakes/gemini.ts";
import { type FakeProvider, respondJson, respondSse, startFakeProvider } from "./fakes/http.ts";
import {
  baseInput,
  collect,
  errorOf,
  type Harness,
  POD_TOOL,
  startHarness,
  textOf,
  toolCallsOf,
  usageOf,
} from "./harness.ts";

const KEY = "AIza-test-gemini-key-000111";
let fake: FakeProvider;
let h: Harness;
const native = (over: Record<string, unknown> = {}) => ({
  provider: "google",
  backend: "google-native" as const,
  model: "gemini-2.5-pro",
  apiKeyEnv: "GEMINI_KEY",
  baseUrl: fake.url,
  ...over,
});

type GeminiBody = {
  contents: { role: string; parts: Record<string, unknown>[] }[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: Record<string, unknown>[];
  generationConfig?: { thinkingConfig?: Record<string, unknown> };
};
const bodyOf = (i = 0) => fake.requests[i]?.body as GeminiBody;

beforeAll(async () => {
  fake = await startFakeProvider();
  h = await startHarness({ GEMINI_KEY: KEY });
});
afterAll(async () => {
  await h.stop();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

describe("google-native backend → Gemini streamGenerateContent (alt=sse)", () => {
  it("streams thought parts as thinking, text, a functionCall with mapped name, and usage", async () => {
    fake.enqueue(
      respondSse([
        geminiChunk([{ text: "Restarts point at memory.", thought: true }]),
        geminiChunk([{ text: "I will list the pods." }]),
        geminiChunk(
          [
            {
              functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } },
              thoughtSignature: "c2lnLTE=",
            },
          ],
          { finishReason: "STOP", usage: geminiUsage(50, 12, 30) },
        ),
      ]),
    );
    const chunks = await collect(h.client.generate(baseInput(native(), { tools: [POD_TOOL] })));
    expect(textOf(chunks, "thinking")).toBe("Restarts point at memory.");
    expect(textOf(chunks)).toBe("I will list the pods.");
    const calls = toolCallsOf(chunks);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      name: "kubernetes-server.pods_list",
      arguments: '{"namespace":"prod"}',
    });
    expect(usageOf(chunks)).toEqual({
      type: "usage",
      inputTokens: 50,
      outputTokens: 12,
      totalTokens: 92,
      thinkingTokens: 30,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    });

    const req = fake.requests[0];
    expect(req?.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    expect(req?.headers["x-goog-api-key"]).toBe(KEY);
    const body = bodyOf();
    expect(body.systemInstruction?.parts[0]?.text).toBe("You are an SRE agent.");
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          expect.objectContaining({
            name: "kubernetes-server__pods_list",
            parametersJsonSchema: POD_TOOL.parameters,
          }),
        ],
      },
    ]);
    expect(body.generationConfig?.thinkingConfig).toEqual({
      includeThoughts: true,
      thinkingBudget: 32768,
    });
  });

  it("streams the signature with its tool call and sends back only what the conversation carries", async () => {
    fake.enqueue(
      respondSse([
        geminiChunk(
          [
            {
              functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } },
              thoughtSignature: "c2lnLWFiYw==",
            },
          ],
          { finishReason: "STOP", usage: geminiUsage(1, 1, 1) },
        ),
      ]),
    );
    const input = baseInput(native(), { tools: [POD_TOOL] });
    const first = await collect(h.client.generate(input));
    const call = toolCallsOf(first)[0];
    if (call?.type !== "tool_call") throw new Error("expected a tool call");
    expect(call.thoughtSignature).toBe("c2lnLWFiYw==");
    const nextTurn = (signatures: Record<string, string> | undefined) =>
      baseInput(native(), {
        tools: [POD_TOOL],
        messages: [
          ...input.messages,
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: call.callId, name: call.name, arguments: call.arguments }],
            ...(signatures && { continuity: { toolCallSignatures: signatures } }),
          },
          {
            role: "tool",
            content: "web-1 OOMKilled",
            toolCallId: call.callId,
            toolName: call.name,
          },
        ],
      });
    fake.enqueue(
      respondSse([geminiChunk([{ text: "It is OOMKilled." }], { finishReason: "STOP" })]),
    );
    await collect(h.client.generate(nextTurn({ [call.callId]: "c2lnLWFiYw==" })));
    const model = bodyOf(1).contents.find((c) => c.role === "model");
    expect(model?.parts[0]).toEqual({
      functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } },
      thoughtSignature: "c2lnLWFiYw==",
    });
    const toolResult = bodyOf(1).contents.at(-1);
    expect(toolResult).toEqual({
      role: "user",
      parts: [
        {
          functionResponse: {
            name: "kubernetes-server__pods_list",
            response: { result: "web-1 OOMKilled" },
          },
        },
      ],
    });

    // llm-service remembers nothing: a conversation without the signature sends none.
    fake.enqueue(respondSse([geminiChunk([{ text: "ok" }], { finishReason: "STOP" })]));
    await collect(h.client.generate(nextTurn(undefined)));
    const otherModel = bodyOf(2).contents.find((c) => c.role === "model");
    expect(otherModel?.parts[0]).toEqual({
      functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } },
    });
  });

  it("binds native tools only when no MCP tools are bound, and streams code execution and grounding", async () => {
    const nativeTools = { googleSearch: true, codeExecution: true, urlContext: true };
    fake.enqueue(
      respondSse([
        geminiChunk([{ executableCode: { language: "PYTHON", code: "print(2**10)" } }]),
        geminiChunk([{ codeExecutionResult: { outcome: "OUTCOME_OK", output: "1024\n" } }]),
        geminiChunk([{ text: "2^10 is 1024." }], {
          finishReason: "STOP",
          candidate: {
            groundingMetadata: {
              webSearchQueries: ["2 to the power of 10"],
              groundingChunks: [
                { web: { uri: "https://example.org/pow", title: "Powers of two" } },
              ],
            },
          },
        }),
      ]),
    );
    const chunks = await collect(h.client.generate(baseInput(native({ nativeTools }))));
    expect(bodyOf(0).tools).toEqual([
      { googleSearch: {} },
      { codeExecution: {} },
      { urlContext: {} },
    ]);
    expect(chunks.filter((c) => c.type === "code_execution")).toEqual([
      { type: "code_execution", code: "print(2**10)", result: "" },
      { type: "code_execution", code: "", result: "1024\n" },
    ]);
    expect(chunks.find((c) => c.type === "grounding")).toEqual({
      type: "grounding",
      webSearchQueries: ["2 to the power of 10"],
      sources: [{ uri: "https://example.org/pow", title: "Powers of two" }],
      urlContextUrls: [],
    });

    fake.enqueue(respondSse([geminiChunk([{ text: "ok" }], { finishReason: "STOP" })]));
    await collect(h.client.generate(baseInput(native({ nativeTools }), { tools: [POD_TOOL] })));
    const tools = bodyOf(1).tools ?? [];
    expect(tools).toHaveLength(1);
    expect(Object.keys(tools[0] ?? {})).toEqual(["functionDeclarations"]);
  });

  it("chooses thinking by model: a level for Gemini 3, the request's budget when given", async () => {
    fake.enqueue(respondSse([geminiChunk([{ text: "a" }], { finishReason: "STOP" })]));
    await collect(h.client.generate(baseInput(native({ model: "gemini-3-pro-preview" }))));
    expect(bodyOf(0).generationConfig?.thinkingConfig).toEqual({
      includeThoughts: true,
      thinkingLevel: "HIGH",
    });
    fake.enqueue(respondSse([geminiChunk([{ text: "b" }], { finishReason: "STOP" })]));
    await collect(
      h.client.generate(baseInput(native({ model: "gemini-2.5-flash", thinkingBudget: 1024 }))),
    );
    expect(bodyOf(1).generationConfig?.thinkingConfig).toEqual({
      includeThoughts: true,
      thinkingBudget: 1024,
    });
  });

  it("retries a 429 RESOURCE_EXHAUSTED and an empty response, then answers", async () => {
    fake.enqueue(
      respondJson(429, geminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted")),
      respondSse([geminiChunk([], { finishReason: "STOP" })]),
      respondSse([geminiChunk([{ text: "third time" }], { finishReason: "STOP" })]),
    );
    const chunks = await collect(h.client.generate(baseInput(native())));
    expect(errorOf(chunks)).toBeUndefined();
    expect(textOf(chunks)).toBe("third time");
    expect(fake.requests.length).toBe(3);
  });

  it("reports a safety block as non-retryable content_blocked without retrying", async () => {
    fake.enqueue(
      respondSse([
        {
          data: {
            promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
            usageMetadata: geminiUsage(5, 0, 0),
          },
        },
      ]),
    );
    const chunks = await collect(h.client.generate(baseInput(native())));
    expect(errorOf(chunks)).toMatchObject({ code: "content_blocked", retryable: false });
    expect(fake.requests.length).toBe(1);
  });

  it("fails a 401 (and Gemini's 400 API_KEY_INVALID) at once as non-retryable auth errors", async () => {
    fake.enqueue(
      respondJson(
        401,
        geminiError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
      ),
    );
    const chunks = await collect(h.client.generate(baseInput(native())));
    expect(errorOf(chunks)).toMatchObject({ code: "auth", retryable: false });
    expect(JSON.stringify(errorOf(chunks))).toContain("GEMINI_KEY");
    fake.enqueue(
      respondJson(
        400,
        geminiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
      ),
    );
    const again = await collect(h.client.generate(baseInput(native())));
    expect(errorOf(again)).toMatchObject({ code: "auth", retryable: false });
    expect(fake.requests.length).toBe(2);
  });

  it("gives up after retries on a 500 with a retryable error chunk", async () => {
    for (let i = 0; i < 4; i++)
      fake.enqueue(respondJson(500, geminiError(500, "INTERNAL", "internal error")));
    const chunks = await collect(h.client.generate(baseInput(native())));
    expect(errorOf(chunks)).toMatchObject({ code: "provider_unavailable", retryable: true });
    expect(fake.requests.length).toBe(4);
  });

  it("closes the provider connection when the client cancels mid-stream", async () => {
    fake.enqueue(respondSse([geminiChunk([{ text: "thinking…", thought: true }])], { hang: true }));
    const abort = new AbortController();
    const closed = fake.clientClosed();
    await expect(
      (async () => {
        for await (const chunk of h.client.generate(baseInput(native()), {
          signal: abort.signal,
        })) {
          if (chunk.type === "thinking") abort.abort();
        }
      })(),
    ).rejects.toBeInstanceOf(LlmCancelledError);
    await closed;
  });
});

describe("langchain backend → Gemini (AI SDK google provider)", () => {
  it("streams text, thinking and a mapped functionCall with usage", async () => {
    fake.enqueue(
      respondSse([
        geminiChunk([{ text: "Looking at restarts.", thought: true }]),
        geminiChunk(
          [{ functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } } }],
          {
            finishReason: "STOP",
            usage: geminiUsage(20, 5, 7),
          },
        ),
      ]),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput(
          {
            provider: "google",
            model: "gemini-2.5-flash",
            apiKeyEnv: "GEMINI_KEY",
            baseUrl: `${fake.url}/v1beta`,
            thinkingBudget: 512,
          },
          { tools: [POD_TOOL] },
        ),
      ),
    );
    expect(textOf(chunks, "thinking")).toBe("Looking at restarts.");
    expect(toolCallsOf(chunks)[0]).toMatchObject({
      name: "kubernetes-server.pods_list",
      arguments: '{"namespace":"prod"}',
    });
    expect(usageOf(chunks)).toMatchObject({ inputTokens: 20 });
    expect(fake.requests[0]?.path).toBe(
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(fake.requests[0]?.headers["x-goog-api-key"]).toBe(KEY);
  });
});

describe("google-native backend → Vertex AI", () => {
  it("reaches Vertex AI express mode with the key from api_key_env", async () => {
    fake.enqueue(respondSse([geminiChunk([{ text: "from vertex" }], { finishReason: "STOP" })]));
    const chunks = await collect(
      h.client.generate(baseInput(native({ provider: "vertexai", model: "gemini-2.5-flash" }))),
    );
    expect(textOf(chunks)).toBe("from vertex");
    expect(fake.requests[0]?.path).toBe(
      "/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(fake.requests[0]?.headers["x-goog-api-key"]).toBe(KEY);
  });
});
