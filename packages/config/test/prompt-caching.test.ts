import { describe, expect, it } from "vitest";
import { effectiveReasoningEffort, takesDefaultReasoningEffort } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

describe("system.prompt_caching", () => {
  it("is on when omitted (as in the Go TARSy) and off with enabled: false", () => {
    expect(load({}).config.system.prompt_caching).toEqual({ enabled: true });
    const off = load({ tarsy: "system:\n  prompt_caching:\n    enabled: false\n" });
    expect(off.config.system.prompt_caching).toEqual({ enabled: false });
    expect(off.warnings.filter((w) => w.path.includes("prompt_caching"))).toEqual([]);
  });

  it("reports a value that is not a boolean with file, path and line", () => {
    const issues = loadIssues({ tarsy: "system:\n  prompt_caching:\n    enabled: sometimes\n" });
    expect(issues.map((i) => [i.file, i.path, i.line])).toEqual([
      ["tarsy.yaml", "system.prompt_caching.enabled", 3],
    ]);
  });
});

describe("llm_providers.*.reasoning_effort", () => {
  const providers = (effort: string) => `llm_providers:
  deep:
    type: anthropic
    model: claude-sonnet-4-5
    reasoning_effort: ${effort}
`;

  it("is read for each provider", () => {
    for (const effort of ["low", "medium", "high", "xhigh", "max"]) {
      const { config, warnings } = load({ providers: providers(effort) });
      expect(config.llmProviders.get("deep")?.reasoning_effort).toBe(effort);
      expect(warnings.filter((w) => w.path.includes("reasoning_effort"))).toEqual([]);
    }
  });

  it("refuses a value outside low, medium, high, xhigh, max with file, path and line", () => {
    const issues = loadIssues({ providers: providers("extreme") });
    expect(issues).toEqual([
      expect.objectContaining({
        file: "llm-providers.yaml",
        path: "llm_providers.deep.reasoning_effort",
        line: 5,
        message: "must be one of low, medium, high, xhigh, max",
      }),
    ]);
    expect(loadIssues({ providers: providers("''") })).toEqual([
      expect.objectContaining({ path: "llm_providers.deep.reasoning_effort", line: 5 }),
    ]);
  });

  it("defaults to high for the models the Go TARSy gives a default, else the provider's own", () => {
    expect(takesDefaultReasoningEffort("gpt-5.6-sol")).toBe(true);
    expect(takesDefaultReasoningEffort("gpt-5.6-chat")).toBe(false);
    expect(takesDefaultReasoningEffort("gpt-5.2")).toBe(false);
    expect(takesDefaultReasoningEffort("claude-opus-4-8")).toBe(true);
    expect(takesDefaultReasoningEffort("claude-sonnet-4-5-20250929")).toBe(false);
    expect(takesDefaultReasoningEffort("gemini-3.8-pro")).toBe(true);
    expect(takesDefaultReasoningEffort("gemini-2.5-pro")).toBe(false);
    expect(takesDefaultReasoningEffort("grok-4.6")).toBe(true);
    expect(effectiveReasoningEffort({ model: "gpt-5.6-sol" })).toBe("high");
    expect(effectiveReasoningEffort({ model: "gpt-5.6-sol", reasoning_effort: "low" })).toBe("low");
    expect(effectiveReasoningEffort({ model: "gpt-4.1" })).toBeUndefined();
  });
});
