import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

function system(costEstimation: string): string {
  return `system:\n  cost_estimation:\n${costEstimation.replace(/^/gm, "    ")}\n`;
}

describe("system.cost_estimation", () => {
  it("defaults to enabled with no rates and no promotions", () => {
    const { config } = load({ tarsy: "" });
    expect(config.system.cost_estimation).toEqual({
      enabled: true,
      model_rates: {},
      promotions: [],
    });
  });

  it("reads model_rates and promotions; times become epoch ms, a day is its 00:00 UTC", () => {
    const { config } = load({
      tarsy: system(`enabled: true
model_rates:
  my-model: { input_per_million: 2, output_per_million: 8 }
promotions:
  - id: launch
    model: my-model
    start: "2026-01-01"
    end: "2026-02-01T12:00:00+01:00"
    input_per_million: 0.5
    output_per_million: 1
  - model: my-model
    end: "2025-12-01"
    input_per_million: 0
    output_per_million: 0`),
    });
    expect(config.system.cost_estimation).toEqual({
      enabled: true,
      model_rates: { "my-model": { input_per_million: 2, output_per_million: 8 } },
      promotions: [
        {
          id: "launch",
          model: "my-model",
          start_ms: Date.UTC(2026, 0, 1),
          end_ms: Date.UTC(2026, 1, 1, 11),
          input_per_million: 0.5,
          output_per_million: 1,
        },
        {
          id: "my-model#2",
          model: "my-model",
          start_ms: null,
          end_ms: Date.UTC(2025, 11, 1),
          input_per_million: 0,
          output_per_million: 0,
        },
      ],
    });
  });

  it("rejects bad times, a promotion ending before it starts, and overlapping promotions of a model", () => {
    const issues = loadIssues({
      tarsy: system(`promotions:
  - { id: bad-end, model: a, end: "next tuesday", input_per_million: 1, output_per_million: 1 }
  - { id: bad-start, model: b, start: "soon", end: "2026-01-01", input_per_million: 1, output_per_million: 1 }
  - { id: backwards, model: c, start: "2026-02-01", end: "2026-01-01", input_per_million: 1, output_per_million: 1 }
  - { id: first, model: d, start: "2026-01-01", end: "2026-01-10", input_per_million: 1, output_per_million: 1 }
  - { id: second, model: d, start: "2026-01-09", end: "2026-01-20", input_per_million: 1, output_per_million: 1 }
  - { id: touching, model: d, start: "2026-01-20", end: "2026-01-30", input_per_million: 1, output_per_million: 1 }
  - { id: other-model, model: e, start: "2026-01-01", end: "2026-01-10", input_per_million: 1, output_per_million: 1 }`),
    });
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(Object.keys(byPath).sort()).toEqual([
      "system.cost_estimation.promotions[0].end",
      "system.cost_estimation.promotions[1].start",
      "system.cost_estimation.promotions[2].end",
      "system.cost_estimation.promotions[4]",
    ]);
    expect(byPath["system.cost_estimation.promotions[2].end"]).toBe(
      'promotion "backwards" ends before it starts',
    );
    expect(byPath["system.cost_estimation.promotions[4]"]).toBe(
      'promotion "second" overlaps promotion "first" for model d',
    );
  });

  it("rejects a negative rate", () => {
    const issues = loadIssues({
      tarsy: system(`model_rates:
  m: { input_per_million: -1, output_per_million: 1 }`),
    });
    expect(issues.map((i) => i.path)).toEqual([
      "system.cost_estimation.model_rates.m.input_per_million",
    ]);
  });
});
