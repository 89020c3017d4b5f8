import { describe, expect, it } from "vitest";
import { createContinuityCollector } from "./continuity.ts";

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
