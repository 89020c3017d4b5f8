import {
  type ConversationMessage,
  createContinuityCollector,
  type GenerateInput,
  type LlmChunk,
} from "@tarsy/llm-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicStream } from "./fakes/anthropic.ts";
import { geminiChunk, geminiUsage } from "./fakes/gemini.ts";
import { type FakeProvider, respondSse, startFakeProvider } from "./fakes/http.ts";
import { baseInput, collect, type Harness, POD_TOOL, startHarness, textOf } from "./harness.ts";

/**
 * llm-service keeps no reasoning state: two replicas alternate over one multi-turn tool loop,
 * and every request a replica sends to the provider carries the signatures and thinking
 * blocks produced by the other replica's earlier responses, because they travel with the
 * conversation.
 */
let fake: FakeProvider;
let replicaA: Harness;
let replicaB: Harness;

beforeAll(async () => {
  fake = await startFakeProvider();
  const secrets = {
    GEMINI_KEY: "AIza-test-gemini-key-continuity",
    CLAUDE_KEY: "sk-ant-continuity",
  };
  [replicaA, replicaB] = await Promise.all([startHarness(secrets), startHarness(secrets)]);
});
afterAll(async () => {
  await Promise.all([replicaA.stop(), replicaB.stop()]);
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

const TOOL = "kubernetes-server.pods_list";
const PROVIDER_TOOL = "kubernetes-server__pods_list";

/** The assistant message a runner stores for one response: text, tool calls, continuity. */
function assistantTurn(chunks: LlmChunk[]): ConversationMessage {
  const continuity = createContinuityCollector();
  for (const chunk of chunks) continuity.add(chunk);
  const toolCalls = chunks.flatMap((c) =>
    c.type === "tool_call" ? [{ id: c.callId, name: c.name, arguments: c.arguments }] : [],
  );
  const data = continuity.result();
  return {
    role: "assistant",
    content: textOf(chunks),
    ...(toolCalls.length > 0 && { toolCalls }),
    ...(data && { continuity: data }),
  };
}

const toolResult = (callId: string, content: string): ConversationMessage => ({
  role: "tool",
  content,
  toolCallId: callId,
  toolName: TOOL,
});

const callIdsOf = (chunks: LlmChunk[]) =>
  chunks.flatMap((c) => (c.type === "tool_call" ? [c.callId] : []));

const finishedLines = (h: Harness) => h.logLines.filter((l) => l.includes("generate finished"));

describe("google-native: thought signatures travel with the conversation", () => {
  const config = {
    provider: "google",
    backend: "google-native" as const,
    model: "gemini-2.5-pro",
    apiKeyEnv: "GEMINI_KEY",
    baseUrl: "",
  };
  type Body = { contents: { role: string; parts: Record<string, unknown>[] }[] };
  const contentsOf = (i: number) => (fake.requests[i]?.body as Body | undefined)?.contents;
  const functionCall = (namespace: string) => ({
    functionCall: { name: PROVIDER_TOOL, args: { namespace } },
  });
  const functionResponse = (result: string) => ({
    functionResponse: { name: PROVIDER_TOOL, response: { result } },
  });

  it("replicas A and B alternate over four turns; each request carries every earlier signature", async () => {
    const linesA = finishedLines(replicaA).length;
    const linesB = finishedLines(replicaB).length;
    const input = (messages: ConversationMessage[]): GenerateInput =>
      baseInput({ ...config, baseUrl: fake.url }, { tools: [POD_TOOL], messages });
    const question: ConversationMessage = { role: "user", content: "Why is pod web-1 crashing?" };
    const system: ConversationMessage = { role: "system", content: "You are an SRE agent." };

    // Turn 1 on replica A: a thought, then a function call with its signature.
    fake.enqueue(
      respondSse([
        geminiChunk([{ text: "Memory climbs until the kill.", thought: true }]),
        geminiChunk([{ ...functionCall("prod"), thoughtSignature: "c2lnLWNhbGwtMQ==" }], {
          finishReason: "STOP",
          usage: geminiUsage(10, 5, 3),
        }),
      ]),
    );
    const turn1 = await collect(replicaA.client.generate(input([system, question])));
    expect(turn1.filter((c) => c.type === "tool_call")).toEqual([
      {
        type: "tool_call",
        callId: expect.any(String),
        name: TOOL,
        arguments: '{"namespace":"prod"}',
        thoughtSignature: "c2lnLWNhbGwtMQ==",
      },
    ]);
    expect(contentsOf(0)).toEqual([{ role: "user", parts: [{ text: question.content }] }]);
    const [call1 = ""] = callIdsOf(turn1);
    const afterTurn1 = [
      system,
      question,
      assistantTurn(turn1),
      toolResult(call1, "web-1 OOMKilled"),
    ];

    // Turn 2 on replica B: two parallel calls, only the first signed (as Gemini does).
    fake.enqueue(
      respondSse([
        geminiChunk(
          [
            { ...functionCall("kube-system"), thoughtSignature: "c2lnLWNhbGwtMg==" },
            functionCall("default"),
          ],
          { finishReason: "STOP", usage: geminiUsage(10, 5, 3) },
        ),
      ]),
    );
    const turn2 = await collect(replicaB.client.generate(input(afterTurn1)));
    const turn1Model = {
      role: "model",
      parts: [{ ...functionCall("prod"), thoughtSignature: "c2lnLWNhbGwtMQ==" }],
    };
    expect(contentsOf(1)).toEqual([
      { role: "user", parts: [{ text: question.content }] },
      turn1Model,
      { role: "user", parts: [functionResponse("web-1 OOMKilled")] },
    ]);
    const [call2a = "", call2b = ""] = callIdsOf(turn2);
    const afterTurn2 = [
      ...afterTurn1,
      assistantTurn(turn2),
      toolResult(call2a, "coredns Running"),
      toolResult(call2b, "web-1 CrashLoopBackOff"),
    ];

    // Turn 3 on replica A: the answer; its signature arrives on an empty text part.
    fake.enqueue(
      respondSse([
        geminiChunk([{ text: "It is OOMKilled." }]),
        geminiChunk([{ text: "", thoughtSignature: "c2lnLXRleHQtMw==" }], {
          finishReason: "STOP",
          usage: geminiUsage(10, 5, 3),
        }),
      ]),
    );
    const turn3 = await collect(replicaA.client.generate(input(afterTurn2)));
    expect(textOf(turn3)).toBe("It is OOMKilled.");
    const turn2Model = {
      role: "model",
      parts: [
        { ...functionCall("kube-system"), thoughtSignature: "c2lnLWNhbGwtMg==" },
        functionCall("default"),
      ],
    };
    expect(contentsOf(2)).toEqual([
      { role: "user", parts: [{ text: question.content }] },
      turn1Model,
      { role: "user", parts: [functionResponse("web-1 OOMKilled")] },
      turn2Model,
      {
        role: "user",
        parts: [functionResponse("coredns Running"), functionResponse("web-1 CrashLoopBackOff")],
      },
    ]);

    // Turn 4 on replica B (a follow-up question): the answer's text part keeps its signature.
    fake.enqueue(
      respondSse([geminiChunk([{ text: "Raise the limit." }], { finishReason: "STOP" })]),
    );
    const followUp: ConversationMessage = { role: "user", content: "And the fix?" };
    await collect(replicaB.client.generate(input([...afterTurn2, assistantTurn(turn3), followUp])));
    expect(contentsOf(3)?.slice(5)).toEqual([
      {
        role: "model",
        parts: [{ text: "It is OOMKilled.", thoughtSignature: "c2lnLXRleHQtMw==" }],
      },
      { role: "user", parts: [{ text: "And the fix?" }] },
    ]);

    expect(fake.requests).toHaveLength(4);
    expect(finishedLines(replicaA).length - linesA).toBe(2);
    expect(finishedLines(replicaB).length - linesB).toBe(2);
  });
});

describe("langchain → Anthropic: signed thinking blocks travel with the conversation", () => {
  const config = () => ({
    provider: "anthropic",
    model: "claude-fake",
    apiKeyEnv: "CLAUDE_KEY",
    baseUrl: `${fake.url}/v1`,
    thinkingBudget: 2048,
    maxTokens: 8192,
  });
  type Body = { messages: { role: string; content: Record<string, unknown>[] }[] };
  const messagesOf = (i: number) => (fake.requests[i]?.body as Body | undefined)?.messages;
  const input = (messages: ConversationMessage[]): GenerateInput =>
    baseInput(config(), { tools: [POD_TOOL], messages });

  it("replicas A and B alternate over a tool loop; each tool_use turn is preceded by its blocks", async () => {
    const linesA = finishedLines(replicaA).length;
    const linesB = finishedLines(replicaB).length;
    const question: ConversationMessage = { role: "user", content: "Why is pod web-1 crashing?" };
    const system: ConversationMessage = { role: "system", content: "You are an SRE agent." };

    // Turn 1 on replica A: a signed thinking block, then a tool_use.
    fake.enqueue(
      respondSse(
        anthropicStream({
          thinking: ["Need the ", "pod list."],
          signature: "sig-turn-1",
          toolUses: [{ id: "toolu_1", name: PROVIDER_TOOL, input: '{"namespace":"prod"}' }],
          usage: { input: 10, output: 5 },
        }),
      ),
    );
    const turn1 = await collect(replicaA.client.generate(input([system, question])));
    expect(textOf(turn1, "thinking")).toBe("Need the pod list.");
    expect(turn1.filter((c) => c.type === "reasoning")).toEqual([
      { type: "reasoning", thinking: "Need the pod list.", signature: "sig-turn-1" },
    ]);
    expect(messagesOf(0)).toEqual([
      { role: "user", content: [{ type: "text", text: question.content }] },
    ]);
    const afterTurn1 = [
      system,
      question,
      assistantTurn(turn1),
      toolResult("toolu_1", "web-1 OOMKilled"),
    ];

    // Turn 2 on replica B: a signed block and a redacted block, then a tool_use.
    fake.enqueue(
      respondSse(
        anthropicStream({
          thinking: ["Check the node too."],
          signature: "sig-turn-2",
          redactedThinking: ["cmVkYWN0ZWQtMg=="],
          toolUses: [{ id: "toolu_2", name: PROVIDER_TOOL, input: '{"namespace":"kube-system"}' }],
          usage: { input: 10, output: 5 },
        }),
      ),
    );
    const turn2 = await collect(replicaB.client.generate(input(afterTurn1)));
    expect(turn2.filter((c) => c.type === "reasoning")).toEqual([
      { type: "reasoning", thinking: "Check the node too.", signature: "sig-turn-2" },
      { type: "reasoning", thinking: "", redactedData: "cmVkYWN0ZWQtMg==" },
    ]);
    const turn1Assistant = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Need the pod list.", signature: "sig-turn-1" },
        { type: "tool_use", id: "toolu_1", name: PROVIDER_TOOL, input: { namespace: "prod" } },
      ],
    };
    const turn1Result = {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "web-1 OOMKilled" }],
    };
    expect(messagesOf(1)).toEqual([
      { role: "user", content: [{ type: "text", text: question.content }] },
      turn1Assistant,
      turn1Result,
    ]);

    // Turn 3 on replica A: the answer, with both earlier turns' blocks in the request.
    fake.enqueue(
      respondSse(anthropicStream({ text: ["OOMKilled."], usage: { input: 1, output: 1 } })),
    );
    const afterTurn2 = [...afterTurn1, assistantTurn(turn2), toolResult("toolu_2", "node ok")];
    const turn3 = await collect(replicaA.client.generate(input(afterTurn2)));
    expect(textOf(turn3)).toBe("OOMKilled.");
    expect(messagesOf(2)).toEqual([
      { role: "user", content: [{ type: "text", text: question.content }] },
      turn1Assistant,
      turn1Result,
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Check the node too.", signature: "sig-turn-2" },
          { type: "redacted_thinking", data: "cmVkYWN0ZWQtMg==" },
          {
            type: "tool_use",
            id: "toolu_2",
            name: PROVIDER_TOOL,
            input: { namespace: "kube-system" },
          },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "node ok" }],
      },
    ]);

    expect(fake.requests).toHaveLength(3);
    expect(finishedLines(replicaA).length - linesA).toBe(2);
    expect(finishedLines(replicaB).length - linesB).toBe(1);
  });

  it("a conversation without continuity data sends no thinking block", async () => {
    fake.enqueue(respondSse(anthropicStream({ text: ["ok"], usage: { input: 1, output: 1 } })));
    await collect(
      replicaB.client.generate(
        input([
          { role: "user", content: "check" },
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: "toolu_9", name: TOOL, arguments: "{}" }],
          },
          toolResult("toolu_9", "fine"),
        ]),
      ),
    );
    expect(messagesOf(0)?.[1]).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_9", name: PROVIDER_TOOL, input: {} }],
    });
  });
});
