import { describe, expect, it } from "vitest";
import {
  formatInvestigationContext,
  investigationOrder,
  type PlacedEvent,
} from "./investigation.ts";

const event = (
  stageId: string | null,
  executionId: string | null,
  content: string,
): PlacedEvent => ({
  stageId,
  executionId,
  eventType: "final_analysis",
  status: "completed",
  content,
  metadata: null,
});

describe("investigationOrder", () => {
  it("keeps each parallel agent's events together, by agent index, and stages in the order they ran", () => {
    const agentIndex = new Map([
      ["triage-1", 1],
      ["log", 1],
      ["events", 2],
      ["synth", 1],
    ]);
    // As written: the two parallel agents of stage B interleaved, agent 2 first.
    const written = [
      event("A", "triage-1", "triage"),
      event("B", "events", "events: first"),
      event("B", "log", "logs: first"),
      event("B", "events", "events: second"),
      event("B", "log", "logs: second"),
      event("C", "synth", "synthesis"),
      event(null, null, "executive summary"),
      event("D", null, "user question"),
      event("D", "chat", "chat answer"),
    ];
    expect(investigationOrder(written, agentIndex).map((e) => e.content)).toEqual([
      "triage",
      "logs: first",
      "logs: second",
      "events: first",
      "events: second",
      "synthesis",
      "executive summary",
      "user question",
      "chat answer",
    ]);
  });

  it("gives a chat question context in that order", () => {
    const context = formatInvestigationContext(
      investigationOrder(
        [event("B", "e2", "Replica 2: healthy"), event("B", "e1", "Replica 1: fits")],
        new Map([
          ["e1", 1],
          ["e2", 2],
        ]),
      ),
    );
    expect(context.indexOf("Replica 1: fits")).toBeLessThan(context.indexOf("Replica 2: healthy"));
  });
});

describe("forced conclusions in the story", () => {
  it("says which final analysis was forced, and why; older events without a reason were the iteration limit", () => {
    const text = formatInvestigationContext([
      {
        ...event("A", "a", "From what there was."),
        metadata: { forced_conclusion: true, reason: "time_budget" },
      },
      { ...event("B", "b", "Best guess."), metadata: { forced_conclusion: true } },
      event("C", "c", "Answered."),
    ]);
    expect(text).toBe(
      [
        "**Final analysis (forced conclusion — time budget):**\nFrom what there was.",
        "**Final analysis (forced conclusion — max iterations):**\nBest guess.",
        "**Final analysis:**\nAnswered.",
      ].join("\n\n"),
    );
  });
});
