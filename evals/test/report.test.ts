/**
 * The report's arithmetic without a stack: cost and tokens summed over priced runs, pass rates
 * grouped per provider/model across two providers, the nearest-rank percentiles.
 */

import { describe, expect, it } from "vitest";
import { buildReport, percentile, renderMarkdown } from "../src/report.ts";
import type { CaseResult, CaseStatus } from "../src/run.ts";

function result(
  over: Partial<CaseResult> & { case_id: string; provider: string; status: CaseStatus },
): CaseResult {
  return {
    tags: [],
    model: "m",
    iteration: 1,
    reason: null,
    session_id: null,
    session_status: "completed",
    final_analysis: null,
    executive_summary: null,
    tool_calls: [],
    expected_tools_missing: [],
    fixture_misses: [],
    judgement: null,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    cost_completeness: "complete",
    duration_ms: null,
    ...over,
  };
}

describe("evaluation report", () => {
  const results = [
    result({
      case_id: "a",
      provider: "google",
      model: "gemini-2.5-pro",
      status: "PASS",
      input_tokens: 1000,
      output_tokens: 200,
      total_tokens: 1200,
      cost_usd: 0.0125,
      duration_ms: 4000,
    }),
    result({
      case_id: "b",
      provider: "google",
      model: "gemini-2.5-pro",
      status: "FAIL",
      input_tokens: 500,
      output_tokens: 100,
      total_tokens: 600,
      cost_usd: 0.0075,
      duration_ms: 2000,
    }),
    result({
      case_id: "a",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      status: "PASS",
      input_tokens: 800,
      output_tokens: 300,
      total_tokens: 1100,
      cost_usd: 0.0069,
      duration_ms: 6000,
    }),
    result({
      case_id: "b",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      status: "ERROR",
      reason: "session failed",
      cost_completeness: "partial",
      cost_usd: 0.001,
    }),
  ];
  const report = buildReport(results, {
    provider: "google",
    model: "gemini-2.5-pro",
    judge: "deterministic",
    iterations: 1,
    wallTimeMs: 9000,
  });

  it("sums the priced cost and the tokens of every run; counts runs not fully priced", () => {
    expect(report.cost_usd).toBeCloseTo(0.0279, 10);
    expect(report.runs_not_fully_priced).toBe(1);
    expect(report.tokens).toEqual({ input: 2300, output: 600, total: 2900 });
    expect(report).toMatchObject({ cases: 2, runs: 4, passed: 2, pass_rate: 0.5 });
    expect(report.by_status).toEqual({ PASS: 2, FAIL: 1, FIXTURE_MISS: 0, ERROR: 1 });
    const md = renderMarkdown(report);
    expect(md).toContain("cost $0.0279 (1 run(s) with unpriced LLM calls)");
    expect(md).toContain("| a | 1 | PASS | 4.00 s | 1200 | $0.0125 |");
  });

  it("groups pass rates per provider and model, across two providers", () => {
    expect(report.by_provider).toEqual([
      {
        key: "anthropic/claude-sonnet-4-5",
        runs: 2,
        passed: 1,
        pass_rate: 0.5,
        by_status: { PASS: 1, FAIL: 0, FIXTURE_MISS: 0, ERROR: 1 },
      },
      {
        key: "google/gemini-2.5-pro",
        runs: 2,
        passed: 1,
        pass_rate: 0.5,
        by_status: { PASS: 1, FAIL: 1, FIXTURE_MISS: 0, ERROR: 0 },
      },
    ]);
  });

  it("takes duration percentiles over the runs that have one (nearest rank)", () => {
    expect(report.duration_ms).toEqual({ p50: 4000, p95: 6000 });
    expect(percentile([], 50)).toBeNull();
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 75)).toBe(3);
    expect(percentile([1, 2, 3, 4], 95)).toBe(4);
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 0)).toBe(1);
  });
});
