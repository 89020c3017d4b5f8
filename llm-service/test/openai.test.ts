import { LlmCancelledError, LlmDeadlineExceededError } from "@tarsy/llm-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeProvider,
  type Responder,
  respondJson,
  respondSse,
  startFakeProvider,
} from "./fakes/http.ts";
import { openAiError, openAiStream } from "./fakes/openai.ts";
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

const KEY = "sk-test-openai-0123456789abcdef";
let fake: FakeProvider;
let h: Harness;
const config = () => ({
  provider: "openai",
  model: "gpt-fake",
  apiKeyEnv: "MY_OPENAI_KEY",
  baseUrl: `${fake.url}/v1`,
});

beforeAll(async () => {
  fake = await startFakeProvider();
  // OPENAI_API_KEY is a decoy: only the variable the config names may be read.
  h = await startHarness({ MY_OPENAI_KEY: KEY, OPENAI_API_KEY: "sk-decoy-must-not-be-used" });
});
afterAll(async () => {
  await h.stop();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

describe("langchain backend → OpenAI chat completions (SSE)", () => {
  it("streams text in deltas, then usage, with the key from the env var the config names", async () => {
    fake.enqueue(
      respondSse(
        openAiStream({ text: ["The pod ", "is OOMKilled."], usage: { prompt: 12, completion: 6 } }),
      ),
    );
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(chunks.filter((c) => c.type === "text").length).toBe(2);
    expect(textOf(chunks)).toBe("The pod is OOMKilled.");
    expect(usageOf(chunks)).toEqual({
      type: "usage",
      inputTokens: 12,
      outputTokens: 6,
      totalTokens: 18,
      thinkingTokens: 0,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    });
    expect(chunks.at(-1)?.type).toBe("usage");
    const [req] = fake.requests;
    expect(req?.path).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = req?.body as { stream: boolean; messages: { role: string; content: string }[] };
    expect(body.stream).toBe(true);
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("maps tool names server.tool → server__tool on the way out and back on tool calls", async () => {
    fake.enqueue(
      respondSse(
        openAiStream({
          toolCalls: [
            {
              id: "call_a",
              name: "kubernetes-server__pods_list",
              arguments: '{"namespace":"prod"}',
            },
          ],
          usage: { prompt: 30, completion: 9 },
        }),
      ),
    );
    const chunks = await collect(h.client.generate(baseInput(config(), { tools: [POD_TOOL] })));
    expect(toolCallsOf(chunks)).toEqual([
      {
        type: "tool_call",
        callId: "call_a",
        name: "kubernetes-server.pods_list",
        arguments: '{"namespace":"prod"}',
      },
    ]);
    const body = fake.requests[0]?.body as {
      tools: { function: { name: string; parameters: unknown } }[];
    };
    expect(body.tools[0]?.function.name).toBe("kubernetes-server__pods_list");
    expect(body.tools[0]?.function.parameters).toMatchObject({ required: ["namespace"] });
  });

  it("sends earlier tool calls and tool results back in OpenAI's shape", async () => {
    fake.enqueue(respondSse(openAiStream({ text: ["done"], usage: { prompt: 1, completion: 1 } })));
    await collect(
      h.client.generate(
        baseInput(config(), {
          tools: [POD_TOOL],
          messages: [
            { role: "system", content: "sys" },
            { role: "user", content: "check pods" },
            {
              role: "assistant",
              content: "",
              toolCalls: [
                {
                  id: "call_a",
                  name: "kubernetes-server.pods_list",
                  arguments: '{"namespace":"prod"}',
                },
              ],
            },
            {
              role: "tool",
              content: "web-1 CrashLoopBackOff",
              toolCallId: "call_a",
              toolName: "kubernetes-server.pods_list",
            },
          ],
        }),
      ),
    );
    const body = fake.requests[0]?.body as { messages: Record<string, unknown>[] };
    expect(body.messages[2]).toMatchObject({
      role: "assistant",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "kubernetes-server__pods_list" } },
      ],
    });
    expect(body.messages[3]).toMatchObject({
      role: "tool",
      tool_call_id: "call_a",
      content: "web-1 CrashLoopBackOff",
    });
  });

  it("retries a 429 and then streams the answer", async () => {
    fake.enqueue(
      respondJson(429, openAiError("rate_limit_exceeded", "Rate limit reached"), {
        "retry-after": "0",
      }),
      respondSse(openAiStream({ text: ["after retry"], usage: { prompt: 1, completion: 2 } })),
    );
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(errorOf(chunks)).toBeUndefined();
    expect(textOf(chunks)).toBe("after retry");
    expect(fake.requests.length).toBe(2);
  });

  it("fails a 401 at once, non-retryable, naming the env var to fix and never echoing the key", async () => {
    fake.enqueue(
      respondJson(401, openAiError("invalid_api_key", `Incorrect API key provided: ${KEY}.`)),
    );
    const chunks = await collect(h.client.generate(baseInput(config())));
    const error = errorOf(chunks);
    expect(error).toMatchObject({
      type: "error",
      code: "auth",
      retryable: false,
      partialOutput: false,
      retriesExhausted: false,
    });
    expect(error?.type === "error" && error.message).toContain("MY_OPENAI_KEY");
    expect(JSON.stringify(chunks)).not.toContain(KEY);
    expect(fake.requests.length).toBe(1);
    // The captured pino stream has the failure, with the echoed key scrubbed.
    const failure = h.logLines.find((l) => l.includes('"generate failed"'));
    expect(failure).toContain('"code":"auth"');
    expect(failure).toContain("[REDACTED]");
    expect(h.logLines.join("\n")).not.toContain(KEY);
  });

  it("gives up after 3 retries of a 5xx with a retryable error chunk", async () => {
    for (let i = 0; i < 4; i++)
      fake.enqueue(respondJson(503, openAiError("server_error", "overloaded")));
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(errorOf(chunks)).toMatchObject({
      type: "error",
      code: "provider_unavailable",
      retryable: true,
      // The runner falls back at once: llm-service has retried all it may.
      retriesExhausted: true,
      partialOutput: false,
    });
    expect(fake.requests.length).toBe(4);
  });

  it("reports a missing API key env var without calling the provider", async () => {
    const chunks = await collect(
      h.client.generate(baseInput({ ...config(), apiKeyEnv: "NOT_SET_ANYWHERE" })),
    );
    const error = errorOf(chunks);
    expect(error).toMatchObject({ code: "invalid_config", retryable: false });
    expect(error?.type === "error" && error.message).toContain("NOT_SET_ANYWHERE");
    expect(fake.requests.length).toBe(0);
  });

  it("aborts the provider request when the client cancels mid-stream", async () => {
    fake.enqueue(respondSse(openAiStream({ text: ["partial "] }).slice(0, 2), { hang: true }));
    const abort = new AbortController();
    const seen: string[] = [];
    const closed = fake.clientClosed();
    const started = Date.now();
    await expect(
      (async () => {
        for await (const chunk of h.client.generate(baseInput(config()), {
          signal: abort.signal,
        })) {
          if (chunk.type === "text") {
            seen.push(chunk.content);
            abort.abort();
          }
        }
      })(),
    ).rejects.toBeInstanceOf(LlmCancelledError);
    await closed; // the fake saw its connection closed by llm-service
    expect(seen).toEqual(["partial "]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reaches xAI through openai-compatible, streaming reasoning_content as thinking", async () => {
    fake.enqueue(
      respondSse(
        openAiStream({
          reasoning: ["Checking ", "restarts."],
          text: ["Likely OOM."],
          usage: { prompt: 5, completion: 4, reasoning: 3 },
        }),
      ),
    );
    const chunks = await collect(
      h.client.generate(
        baseInput({
          provider: "xai",
          model: "grok-fake",
          apiKeyEnv: "MY_OPENAI_KEY",
          baseUrl: `${fake.url}/v1`,
        }),
      ),
    );
    expect(textOf(chunks, "thinking")).toBe("Checking restarts.");
    expect(textOf(chunks)).toBe("Likely OOM.");
    expect(fake.requests[0]?.path).toBe("/v1/chat/completions");
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("retries a connection dropped before any output", async () => {
    const drop: Responder = async (res) => {
      res.socket?.destroy();
    };
    fake.enqueue(
      drop,
      respondSse(openAiStream({ text: ["second try"], usage: { prompt: 1, completion: 1 } })),
    );
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(textOf(chunks)).toBe("second try");
    expect(fake.requests.length).toBe(2);
  });

  it("never replays a stream that dropped after output: the caller gets a retryable error", async () => {
    const cutAfterOutput: Responder = async (res, req) => {
      setTimeout(() => res.socket?.destroy(), 100);
      await respondSse(openAiStream({ text: ["half an answer"] }).slice(0, 2), { hang: true })(
        res,
        req,
      );
    };
    fake.enqueue(cutAfterOutput);
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(textOf(chunks)).toBe("half an answer");
    expect(errorOf(chunks)).toMatchObject({
      code: "provider_unavailable",
      retryable: true,
      partialOutput: true,
      retriesExhausted: false,
    });
    expect(fake.requests.length).toBe(1);
  });

  it("aborts the provider request when the caller's deadline passes", async () => {
    fake.enqueue(respondSse(openAiStream({ text: ["slow "] }).slice(0, 2), { hang: true }));
    const closed = fake.clientClosed();
    const started = Date.now();
    await expect(
      collect(h.client.generate(baseInput(config()), { deadline: Date.now() + 400 })),
    ).rejects.toBeInstanceOf(LlmDeadlineExceededError);
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
