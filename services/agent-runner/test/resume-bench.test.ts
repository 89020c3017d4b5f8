import { describe, expect, test } from "vitest";
import { formatResumeRows, runResumeBench } from "../../../bench/resume/run.ts";

/**
 * The resume benchmark (`pnpm --filter @tarsy/bench resume`) run small, so it cannot rot. Its
 * counts are exact (the model is stateless, the interruption lands on a known call); its
 * times are figures for an idle machine and are not asserted.
 */
describe("resume benchmark (smoke)", () => {
  test("a resumed execution makes only the cut call again; one started over repeats it all", async () => {
    const rows = await runResumeBench({ iterations: 4, killAt: 3 });
    expect(rows.map((r) => [r.what, r.llmCalls, r.toolCalls])).toEqual([
      ["uninterrupted", 4, 3],
      // The cut third call is made again; the two tool calls before it are not.
      ["resumed", 5, 3],
      // All over again: two more tool calls and three more LLM calls.
      ["started over", 7, 5],
    ]);
    const [base, resumed, restarted] = rows;
    expect(resumed?.tokens).toBeGreaterThan(base?.tokens ?? 0);
    expect(restarted?.tokens).toBeGreaterThan(resumed?.tokens ?? 0);
    expect(formatResumeRows(rows).split("\n")).toHaveLength(rows.length + 2);
  }, 120_000);
});
