import { LlmCancelledError } from "@tarsy/llm-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicError, anthropicStream } from "./fakes/anthropic.ts";
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

const KEY = "sk-ant-test-key-9876543210";
let fake: FakeProvider;
let h: Harness;
const config = () => ({
  provider: "anthropic",
  model: "claude-fake",
  apiKeyEnv: "CLAUDE_KEY",
  baseUrl: `${fake.url}/v1`,
  thinkingBudget: 2048,
  maxTokens: 8192,
});

beforeAll(async () => {
  fake = await startFakeProvider();
  h = await startHarness({ CLAUDE_KEY: KEY });
});
afterAll(async () => {
  await h.stop();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

describe("langchain backend → Anthropic messages (SSE)", () => {
  it("streams extended thinking, text, a tool_use with mapped name, and usage", async () => {
    fake.enqueue(
      respondSse(
        anthropicStream({
          thinking: ["The pod restarts; ", "check its events."],
          text: ["Let me list ", "the pods."],
          toolUses: [
            { id: "toolu_1", name: "kubernetes-server__pods_list", input: '{"namespace":"prod"}' },
          ],
          usage: { input: 40, output: 22 },
        }),
      ),
    );
    const chunks = await collect(h.client.generate(baseInput(config(), { tools: [POD_TOOL] })));
    expect(textOf(chunks, "thinking")).toBe("The pod restarts; check its events.");
    expect(textOf(chunks)).toBe("Let me list the pods.");
    expect(toolCallsOf(chunks)).toEqual([
      {
        type: "tool_call",
        callId: "toolu_1",
        name: "kubernetes-server.pods_list",
        arguments: '{"namespace":"prod"}',
      },
    ]);
    expect(usageOf(chunks)).toMatchObject({ inputTokens: 40, outputTokens: 22 });
    // thinking precedes the answer, as the model produced it
    expect(chunks.findIndex((c) => c.type === "thinking")).toBeLessThan(
      chunks.findIndex((c) => c.type === "text"),
    );

    const req = fake.requests[0];
    expect(req?.path).toBe("/v1/messages");
    expect(req?.headers["x-api-key"]).toBe(KEY);
    const body = req?.body as {
      system: { text: string }[];
      thinking: { type: string; budget_tokens: number };
      tools: { name: string; input_schema: unknown }[];
      stream: boolean;
    };
    expect(body.stream).toBe(true);
    expect(body.system[0]?.text).toBe("You are an SRE agent.");
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body.tools[0]?.name).toBe("kubernetes-server__pods_list");
    expect(body.tools[0]?.input_schema).toMatchObject({ required: ["namespace"] });
  });

  it("sends tool results back as tool_result blocks", async () => {
    fake.enqueue(
      respondSse(anthropicStream({ text: ["It is OOMKilled."], usage: { input: 1, output: 1 } })),
    );
    await collect(
      h.client.generate(
        baseInput(config(), {
          executionId: "exec-results",
          tools: [POD_TOOL],
          messages: [
            { role: "system", content: "sys" },
            { role: "user", content: "check" },
            {
              role: "assistant",
              content: "",
              toolCalls: [{ id: "toolu_1", name: "kubernetes-server.pods_list", arguments: "{}" }],
            },
            {
              role: "tool",
              content: "web-1 OOMKilled",
              toolCallId: "toolu_1",
              toolName: "kubernetes-server.pods_list",
            },
          ],
        }),
      ),
    );
    const body = fake.requests[0]?.body as {
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    expect(body.messages[1]?.content[0]).toMatchObject({
      type: "tool_use",
      id: "toolu_1",
      name: "kubernetes-server__pods_list",
    });
    expect(body.messages[2]?.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_1",
    });
  });

  it("retries a 429 (rate_limit_error) and then answers", async () => {
    fake.enqueue(
      respondJson(
        429,
        anthropicError("rate_limit_error", "Number of requests has exceeded your rate limit"),
      ),
      respondSse(anthropicStream({ text: ["ok"], usage: { input: 1, output: 1 } })),
    );
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(errorOf(chunks)).toBeUndefined();
    expect(textOf(chunks)).toBe("ok");
    expect(fake.requests.length).toBe(2);
  });

  it("fails a 401 at once with a non-retryable auth error that names the env var", async () => {
    fake.enqueue(respondJson(401, anthropicError("authentication_error", "invalid x-api-key")));
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(errorOf(chunks)).toMatchObject({ code: "auth", retryable: false });
    expect(JSON.stringify(errorOf(chunks))).toContain("CLAUDE_KEY");
    expect(fake.requests.length).toBe(1);
  });

  it("gives up on repeated 529 overloaded with a retryable error", async () => {
    for (let i = 0; i < 4; i++)
      fake.enqueue(respondJson(529, anthropicError("overloaded_error", "Overloaded")));
    const chunks = await collect(h.client.generate(baseInput(config())));
    expect(errorOf(chunks)).toMatchObject({ code: "provider_unavailable", retryable: true });
    expect(fake.requests.length).toBe(4);
  });

  it("closes the provider connection when the client cancels mid-stream", async () => {
    const events = anthropicStream({ thinking: ["thinking hard"], text: ["never finished"] });
    fake.enqueue(respondSse(events.slice(0, 3), { hang: true }));
    const abort = new AbortController();
    const closed = fake.clientClosed();
    await expect(
      (async () => {
        for await (const chunk of h.client.generate(baseInput(config()), {
          signal: abort.signal,
        })) {
          if (chunk.type === "thinking") abort.abort();
        }
      })(),
    ).rejects.toBeInstanceOf(LlmCancelledError);
    await closed;
  });

  it("streams the signed thinking block and replays only the blocks the conversation carries", async () => {
    fake.enqueue(
      respondSse(
        anthropicStream({
          thinking: ["Need the pod list."],
          toolUses: [
            { id: "toolu_9", name: "kubernetes-server__pods_list", input: '{"namespace":"prod"}' },
          ],
          usage: { input: 10, output: 5 },
        }),
      ),
    );
    const input = baseInput(config(), { tools: [POD_TOOL] });
    const first = await collect(h.client.generate(input));
    const call = toolCallsOf(first)[0];
    if (call?.type !== "tool_call") throw new Error("expected a tool call");
    const block = first.find((c) => c.type === "reasoning");
    expect(block).toEqual({
      type: "reasoning",
      thinking: "Need the pod list.",
      signature: "EqQBCkYIARgCIkDf",
    });
    const nextTurn = (withBlocks: boolean) =>
      baseInput(config(), {
        tools: [POD_TOOL],
        messages: [
          ...input.messages,
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: call.callId, name: call.name, arguments: call.arguments }],
            ...(withBlocks && {
              continuity: {
                blocks: [{ thinking: "Need the pod list.", signature: "EqQBCkYIARgCIkDf" }],
              },
            }),
          },
          {
            role: "tool",
            content: "web-1 OOMKilled",
            toolCallId: call.callId,
            toolName: call.name,
          },
        ],
      });
    fake.enqueue(respondSse(anthropicStream({ text: ["OOM."], usage: { input: 1, output: 1 } })));
    await collect(h.client.generate(nextTurn(true)));
    type Body = { messages: { role: string; content: Record<string, unknown>[] }[] };
    const assistant = (fake.requests[1]?.body as Body | undefined)?.messages[1];
    expect(assistant?.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(assistant?.content[0]).toEqual({
      type: "thinking",
      thinking: "Need the pod list.",
      signature: "EqQBCkYIARgCIkDf",
    });

    // llm-service remembers nothing: a conversation without the block sends none.
    fake.enqueue(respondSse(anthropicStream({ text: ["OOM."], usage: { input: 1, output: 1 } })));
    await collect(h.client.generate(nextTurn(false)));
    const other = (fake.requests[2]?.body as Body | undefined)?.messages[1];
    expect(other?.content.map((b) => b.type)).toEqual(["tool_use"]);
  });
});
