import { describe, expect, it } from "vitest";
import { describeCost, detectLanguage, formatUsd, wasMasked } from "./format.ts";

describe("detectLanguage", () => {
  it("tells JSON, YAML and text apart", () => {
    expect(detectLanguage('{\n  "pod": "payments-api"\n}')).toBe("json");
    expect(detectLanguage("[1, 2]")).toBe("json");
    expect(detectLanguage("alertname: PodCrashLooping\nnamespace: payments\n")).toBe("yaml");
    expect(detectLanguage("---\nkind: Pod\nmetadata:\n  name: x")).toBe("yaml");
    expect(detectLanguage("{ not json")).toBe("text");
    expect(detectLanguage("payments-api pods stuck in Pending")).toBe("text");
    expect(detectLanguage("note: one line")).toBe("text");
  });
});

describe("wasMasked", () => {
  it("finds what the masking writes, and nothing else", () => {
    expect(wasMasked('{"password": "[MASKED_SECRET_DATA]"}')).toBe(true);
    expect(wasMasked("token [MASKED_GITHUB_TOKEN] used")).toBe(true);
    expect(
      wasMasked("[REDACTED: data masking failure — tool result could not be safely processed]"),
    ).toBe(true);
    expect(wasMasked("MASKED_SECRET_DATA without brackets, [masked_x]")).toBe(false);
  });
});

describe("describeCost", () => {
  it("shows USD, marks a partial estimate and explains a missing one", () => {
    expect(formatUsd(0.0123)).toBe("$0.0123");
    expect(formatUsd(0)).toBe("$0.0000");
    expect(formatUsd(12.345)).toBe("$12.35");
    const cost = (
      estimated_cost_usd: number,
      cost_completeness: "complete" | "partial" | "none",
      unpriced_interactions: number,
    ) => ({ estimated_cost_usd, cost_completeness, unpriced_interactions });
    expect(describeCost(cost(0.0058, "complete", 0))).toEqual({ text: "$0.0058", note: null });
    expect(describeCost(cost(0.0014, "partial", 1))).toEqual({
      text: "$0.0014*",
      note: "Partial estimate: 1 LLM call without a price (unknown model or estimation disabled)",
    });
    expect(describeCost(cost(0, "none", 2)).text).toBe("—");
    expect(describeCost(cost(0, "none", 2)).note).toContain("2 LLM calls without a price");
    expect(describeCost(cost(0, "none", 0)).note).toBe("No LLM calls yet");
  });
});
