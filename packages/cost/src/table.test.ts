import { describe, expect, it } from "vitest";
import { bundledPriceTable } from "./table.ts";

describe("bundledPriceTable", () => {
  it("is versioned, dated and covers the current families", () => {
    const table = bundledPriceTable();
    expect(table.version).toMatch(/\S/);
    expect(table.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const model of [
      "gemini-2.5-pro",
      "gemini-2.5-flash",
      "gemini-3-pro-preview",
      "claude-sonnet-4-5",
      "claude-opus-4-1",
      "claude-haiku-4-5",
      "gpt-4.1",
      "gpt-4o",
      "gpt-5",
      "o3",
      "o4-mini",
    ]) {
      expect(table.models[model], model).toBeDefined();
    }
  });
});
