import { describe, expect, it } from "vitest";
import { type CostEstimationSettings, createCostEstimator } from "./estimate.ts";
import type { PriceTable } from "./table.ts";

const TABLE: PriceTable = {
  version: "t1",
  as_of: "2025-11-01",
  models: {
    "plain-model": { input_per_million: 1, output_per_million: 4 },
    "thinker-model": {
      input_per_million: 0.15,
      output_per_million: 0.6,
      reasoning_per_million: 3.5,
    },
    "long-model": {
      input_per_million: 1.25,
      output_per_million: 10,
      long_context: { threshold_tokens: 200_000, input_per_million: 2.5, output_per_million: 15 },
    },
  },
};

const T0 = Date.UTC(2026, 10, 1);
const HOUR = 3_600_000;

function settings(over: Partial<CostEstimationSettings> = {}): CostEstimationSettings {
  return { enabled: true, model_rates: {}, promotions: [], ...over };
}

describe("createCostEstimator", () => {
  it("prices from the bundled table by exact name, with the table's version as source", () => {
    const estimator = createCostEstimator(settings(), TABLE);
    expect(
      estimator.estimate("plain-model", { input_tokens: 1000, output_tokens: 500 }, T0),
    ).toEqual({
      estimatedCostUsd: 0.003,
      costStatus: "priced",
      costRateSource: "catalog:t1",
    });
  });

  it("model_rates beat the table", () => {
    const estimator = createCostEstimator(
      settings({ model_rates: { "plain-model": { input_per_million: 2, output_per_million: 8 } } }),
      TABLE,
    );
    expect(
      estimator.estimate("plain-model", { input_tokens: 1000, output_tokens: 500 }, T0),
    ).toEqual({
      estimatedCostUsd: 0.006,
      costStatus: "priced",
      costRateSource: "model_rates",
    });
  });

  it("a promotion applies in [start, end): not before, at start, not at end", () => {
    const estimator = createCostEstimator(
      settings({
        model_rates: { "plain-model": { input_per_million: 2, output_per_million: 8 } },
        promotions: [
          {
            id: "launch",
            model: "plain-model",
            start_ms: T0,
            end_ms: T0 + HOUR,
            input_per_million: 0.5,
            output_per_million: 1,
          },
        ],
      }),
      TABLE,
    );
    const usage = { input_tokens: 1000, output_tokens: 1000 };
    expect(estimator.estimate("plain-model", usage, T0 - 1).costRateSource).toBe("model_rates");
    expect(estimator.estimate("plain-model", usage, new Date(T0))).toEqual({
      estimatedCostUsd: 0.0015,
      costStatus: "priced",
      costRateSource: "promotion:launch",
    });
    expect(estimator.estimate("plain-model", usage, T0 + HOUR - 1).costRateSource).toBe(
      "promotion:launch",
    );
    expect(estimator.estimate("plain-model", usage, T0 + HOUR).costRateSource).toBe("model_rates");
  });

  it("a promotion without start is active until its end; it only applies to its exact model", () => {
    const estimator = createCostEstimator(
      settings({
        promotions: [
          {
            id: "p",
            model: "plain-model",
            start_ms: null,
            end_ms: T0,
            input_per_million: 0,
            output_per_million: 0,
          },
        ],
      }),
      TABLE,
    );
    expect(estimator.estimate("plain-model", { input_tokens: 10, output_tokens: 10 }, 0)).toEqual({
      estimatedCostUsd: 0,
      costStatus: "priced",
      costRateSource: "promotion:p",
    });
    expect(
      estimator.estimate("openai/plain-model", { input_tokens: 10, output_tokens: 10 }, 0)
        .costRateSource,
    ).toBe("catalog:t1");
  });

  it("thinking tokens reported apart from output are billed at the reasoning rate", () => {
    const estimator = createCostEstimator(settings(), TABLE);
    // 1000 × 0.15 + 200 × 0.6 + 400 × 3.5 = 150 + 120 + 1400 per million
    const usage = {
      input_tokens: 1000,
      output_tokens: 200,
      thinking_tokens: 400,
      total_tokens: 1600,
    };
    expect(estimator.estimate("thinker-model", usage, T0).estimatedCostUsd).toBe(0.00167);
  });

  it("thinking tokens counted inside output (total = input + output) are not billed twice", () => {
    const estimator = createCostEstimator(settings(), TABLE);
    // output 600 of which 400 thinking: 1000 × 0.15 + 200 × 0.6 + 400 × 3.5
    const usage = {
      input_tokens: 1000,
      output_tokens: 600,
      thinking_tokens: 400,
      total_tokens: 1600,
    };
    expect(estimator.estimate("thinker-model", usage, T0).estimatedCostUsd).toBe(0.00167);
  });

  it("without a reasoning rate, thinking is billed at the output rate (model_rates and promotions too)", () => {
    const usage = { input_tokens: 0, output_tokens: 100, thinking_tokens: 100, total_tokens: 200 };
    expect(
      createCostEstimator(settings(), TABLE).estimate("plain-model", usage, T0).estimatedCostUsd,
    ).toBe(0.0008);
    const configured = createCostEstimator(
      settings({
        model_rates: { "thinker-model": { input_per_million: 1, output_per_million: 10 } },
      }),
      TABLE,
    );
    expect(configured.estimate("thinker-model", usage, T0).estimatedCostUsd).toBe(0.002);
  });

  it("long-context rates apply once the input reaches the threshold", () => {
    const estimator = createCostEstimator(settings(), TABLE);
    expect(
      estimator.estimate("long-model", { input_tokens: 199_999, output_tokens: 0 }, T0)
        .estimatedCostUsd,
    ).toBe(0.24999875);
    expect(
      estimator.estimate("long-model", { input_tokens: 200_000, output_tokens: 1000 }, T0)
        .estimatedCostUsd,
    ).toBe(0.515);
  });

  it("an unknown model is unpriced; disabled estimation is disabled (no cost, no source)", () => {
    const usage = { input_tokens: 1000, output_tokens: 500 };
    expect(createCostEstimator(settings(), TABLE).estimate("mystery-1", usage, T0)).toEqual({
      estimatedCostUsd: null,
      costStatus: "unpriced",
      costRateSource: null,
    });
    const disabled = createCostEstimator(
      settings({
        enabled: false,
        model_rates: { "plain-model": { input_per_million: 1, output_per_million: 1 } },
      }),
      TABLE,
    );
    expect(disabled.estimate("plain-model", usage, T0)).toEqual({
      estimatedCostUsd: null,
      costStatus: "disabled",
      costRateSource: null,
    });
  });

  it("a call without usage (failed before any token) costs 0 when its model is priced", () => {
    expect(
      createCostEstimator(settings(), TABLE).estimate("plain-model", null, T0).estimatedCostUsd,
    ).toBe(0);
  });

  it("uses the bundled table by default", () => {
    const estimate = createCostEstimator(settings()).estimate(
      "gemini-2.5-pro",
      { input_tokens: 100_000, output_tokens: 10_000 },
      T0,
    );
    expect(estimate).toMatchObject({ estimatedCostUsd: 0.225, costStatus: "priced" });
    expect(estimate.costRateSource).toMatch(/^catalog:/);
  });

  describe("prompt-cache tokens (ADR-0026)", () => {
    const cached = (name: string, usage: Record<string, number>) =>
      createCostEstimator(settings()).estimate(
        name,
        { input_tokens: 0, output_tokens: 0, ...usage },
        T0,
      ).estimatedCostUsd;

    it("prices Claude reads and 1-hour writes at the table's cache rates", () => {
      // claude-sonnet-4-5: input 3, read 0.30, 1h write 6, output 15 per million.
      expect(
        cached("claude-sonnet-4-5", {
          input_tokens: 1000,
          cache_read_tokens: 10_000,
          cache_creation_tokens: 2000,
          output_tokens: 100,
        }),
      ).toBe(0.0195); // 0.003 + 0.003 + 0.012 + 0.0015
    });

    it("prices OpenAI and Gemini reads at their cached-input rates", () => {
      expect(cached("gpt-5", { input_tokens: 1000, cache_read_tokens: 8000 })).toBe(0.00225);
      expect(cached("gemini-2.5-pro", { input_tokens: 1000, cache_read_tokens: 8000 })).toBe(
        0.00225,
      );
    });

    it("chooses the long-context tier by the whole prompt, cache included", () => {
      // 1000 uncached + 199,500 read ≥ 200k: the long tier (2.5 in, 0.25 read).
      expect(
        cached("gemini-2.5-pro", { input_tokens: 1000, cache_read_tokens: 199_500 }),
      ).toBeCloseTo(0.0025 + 0.049875, 10);
    });

    it("derives cache rates from a configured rate: read 0.1×, write 2× for Claude, else 1.25×", () => {
      const estimator = createCostEstimator(
        settings({
          model_rates: {
            "claude-x": { input_per_million: 10, output_per_million: 0 },
            "other-x": { input_per_million: 10, output_per_million: 0 },
          },
        }),
        TABLE,
      );
      const usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 1e6 };
      expect(estimator.estimate("claude-x", usage, T0).estimatedCostUsd).toBe(1);
      const write = { input_tokens: 0, output_tokens: 0, cache_creation_tokens: 1e6 };
      expect(estimator.estimate("claude-x", write, T0).estimatedCostUsd).toBe(20);
      expect(estimator.estimate("other-x", write, T0).estimatedCostUsd).toBe(12.5);
    });

    it("does not mistake cache reads for separately reported thinking", () => {
      // OpenAI: total = whole prompt + output (thinking inside output).
      const estimate = createCostEstimator(settings(), TABLE).estimate(
        "plain-model",
        {
          input_tokens: 100,
          cache_read_tokens: 5000,
          output_tokens: 300,
          thinking_tokens: 200,
          total_tokens: 5400,
        },
        T0,
      );
      // 100 × 1 + 5000 × 0.1 + 100 × 4 + 200 × 4 (thinking at output)
      expect(estimate.estimatedCostUsd).toBe(0.0018);
    });
  });
});
