import type { AgentExecution } from "@tarsy/db";
import { describe, expect, it } from "vitest";
import { stageActionsExecuted } from "./chain.ts";
import { actionStageOutcome } from "./metrics.ts";

const execution = (status: string, actionsExecuted: boolean | null) =>
  ({ status, actionsExecuted }) as AgentExecution;

describe("an action stage's actions_executed and outcome", () => {
  it("true if any completed agent acted; false only when all said NO; else unknown", () => {
    expect(
      stageActionsExecuted([execution("completed", false), execution("completed", true)]),
    ).toBe(true);
    expect(
      stageActionsExecuted([execution("completed", false), execution("completed", false)]),
    ).toBe(false);
    // One agent that gave no line: unknown, never "did not act".
    expect(
      stageActionsExecuted([execution("completed", false), execution("completed", null)]),
    ).toBe(null);
    // A failed agent's answer does not count (a stage of failures is unknown).
    expect(stageActionsExecuted([execution("failed", null), execution("completed", false)])).toBe(
      false,
    );
    expect(stageActionsExecuted([execution("failed", null)])).toBe(null);
  });

  it("the metric's outcome label", () => {
    expect(actionStageOutcome("completed", true)).toBe("acted");
    expect(actionStageOutcome("completed", false)).toBe("no_action");
    expect(actionStageOutcome("completed", null)).toBe("unknown");
    expect(actionStageOutcome("failed", true)).toBe("failed");
    expect(actionStageOutcome("timed_out", null)).toBe("failed");
  });
});
