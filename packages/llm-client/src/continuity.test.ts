import { describe, expect, it } from "vitest";
import { continuityFor, createContinuityCollector } from "./continuity.ts";
import type { ConversationMessage } from "./types.ts";

describe("continuity collector", () => {
  it("keeps signatures and signed blocks apart from what is displayed", () => {
    const collector = createContinuityCollector();
    collector.add({ type: "thinking", content: "visible thought" });
    collector.add({ type: "reasoning", thinking: "visible thought", signature: "s-1" });
    collector.add({ type: "reasoning", thinking: "", redactedData: "r-1" });
    collector.add({ type: "text", content: "Answer." });
    collector.add({ type: "text", content: "", thoughtSignature: "t-1" });
    collector.add({ type: "tool_call", callId: "a", name: "s.t", arguments: "{}" });
    collector.add({
      type: "tool_call",
      callId: "b",
      name: "s.t",
      arguments: "{}",
      thoughtSignature: "c-b",
    });
    expect(collector.result()).toEqual({
      blocks: [
        { thinking: "visible thought", signature: "s-1" },
        { thinking: "", redactedData: "r-1" },
      ],
      textSignature: "t-1",
      toolCallSignatures: { b: "c-b" },
    });
  });

  it("reports nothing for a response without continuity data", () => {
    const collector = createContinuityCollector();
    collector.add({ type: "thinking", content: "unsigned" });
    collector.add({ type: "text", content: "Answer." });
    collector.add({ type: "tool_call", callId: "a", name: "s.t", arguments: "{}" });
    expect(collector.result()).toBeUndefined();
  });
});

describe("continuityFor", () => {
  const turn = (producer?: string): ConversationMessage => ({
    role: "assistant",
    content: "Checking.",
    toolCalls: [{ id: "c1", name: "k8s.pods", arguments: "{}" }],
    continuity: { toolCallSignatures: { c1: "sig" }, ...(producer && { producer }) },
  });

  it("keeps what the provider produced, drops what another produced, keeps untagged data", () => {
    const messages: ConversationMessage[] = [
      { role: "user", content: "Why?" },
      turn("gemini-pro"),
      turn("gemini-flash"),
      turn(),
    ];
    const sent = continuityFor(messages, "gemini-pro");
    expect(sent.map((m) => m.continuity?.producer ?? (m.continuity ? "untagged" : null))).toEqual([
      null,
      "gemini-pro",
      null,
      "untagged",
    ]);
    // The text and tool calls of the foreign turn stay; the input is not changed.
    expect(sent[2]).toEqual({ ...turn("gemini-flash"), continuity: undefined });
    expect(messages[2]?.continuity?.producer).toBe("gemini-flash");
  });
});
