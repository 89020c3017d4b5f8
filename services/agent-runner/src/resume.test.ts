import { describe, expect, test } from "vitest";
import type { StoredMessage, TimelineEventRecord } from "./ports.ts";
import { alreadyRepeated, planResume } from "./resume.ts";

let id = 0;
function message(role: StoredMessage["role"], extra: Partial<StoredMessage> = {}): StoredMessage {
  id++;
  return {
    id: `m${id}`,
    role,
    content: `${role} ${id}`,
    toolCalls: null,
    toolCallId: null,
    toolName: null,
    continuity: null,
    ...extra,
  };
}
const call = (callId: string) => ({ id: callId, name: "k8s.pods_list", arguments: "{}" });
const calls = (...ids: string[]) => message("assistant", { toolCalls: ids.map(call) });
const result = (callId: string) =>
  message("tool", { toolCallId: callId, toolName: "k8s.pods_list" });
const prompt = () => [message("system"), message("user")];

describe("planResume: what an interrupted conversation keeps and runs again", () => {
  test("the prompt alone: nothing kept, the first LLM call is made (again)", () => {
    expect(planResume(prompt())).toEqual({
      resumable: true,
      llmTurns: 0,
      toolResults: 0,
      pendingCalls: [],
    });
  });

  test("cut during the 4th of 5 turns' tool call: three turns answered, the 4th call pending", () => {
    const conversation = [
      ...prompt(),
      calls("c1"),
      result("c1"),
      calls("c2"),
      result("c2"),
      calls("c3"),
      result("c3"),
      calls("c4"),
    ];
    expect(planResume(conversation)).toEqual({
      resumable: true,
      llmTurns: 4,
      toolResults: 3,
      pendingCalls: [call("c4")],
    });
  });

  test("a turn with several calls cut after some results: the rest, in order", () => {
    const conversation = [...prompt(), calls("a", "b", "c"), result("b")];
    expect(planResume(conversation)).toMatchObject({
      resumable: true,
      llmTurns: 1,
      toolResults: 1,
      pendingCalls: [call("a"), call("c")],
    });
  });

  test("user messages between turns (sub-agent results, the conclusion request) are kept", () => {
    const conversation = [...prompt(), calls("a"), result("a"), message("user")];
    expect(planResume(conversation)).toMatchObject({ resumable: true, pendingCalls: [] });
  });

  test("what the loop never writes starts over, with the reason", () => {
    const cases: [StoredMessage[], RegExp][] = [
      [[message("user")], /does not begin with its prompt/],
      [[...prompt(), calls("a"), calls("b")], /turn 1 has tool calls without results/],
      [[...prompt(), calls("a"), message("user")], /turn 1 has tool calls without results/],
      [[...prompt(), calls("a"), result("x")], /a tool result \(x\) answers no open call/],
      [[...prompt(), calls("a"), result("a"), result("a")], /answers no open call/],
      [[...prompt(), message("system")], /system message in the middle/],
      [[...prompt(), message("assistant")], /answer was given but not recorded/],
    ];
    for (const [conversation, reason] of cases) {
      const plan = planResume(conversation);
      expect(plan.resumable).toBe(false);
      if (!plan.resumable) expect(plan.reason).toMatch(reason);
    }
  });
});

describe("alreadyRepeated", () => {
  const event = (metadata: Record<string, unknown>): TimelineEventRecord => ({
    id: "e1",
    sessionId: "s",
    stageId: null,
    executionId: "x",
    sequenceNumber: 1,
    eventType: "llm_tool_call",
    status: "failed",
    content: "",
    metadata,
    createdAt: new Date(),
    updatedAt: new Date(),
  });

  test("only a call a resumption already made again, and was cut again, counts", () => {
    expect(alreadyRepeated("c4", [event({ call_id: "c4" })])).toBe(false);
    expect(alreadyRepeated("c4", [event({ call_id: "c4", resumed: true })])).toBe(true);
    expect(alreadyRepeated("c4", [event({ call_id: "c5", resumed: true })])).toBe(false);
  });
});
