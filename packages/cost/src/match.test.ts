import { describe, expect, it } from "vitest";
import { findModelPrice } from "./match.ts";
import type { ModelPrice } from "./table.ts";

const A: ModelPrice = { input_per_million: 1, output_per_million: 2 };
const B: ModelPrice = { input_per_million: 3, output_per_million: 4 };

describe("findModelPrice", () => {
  it("an exact key wins over every heuristic", () => {
    expect(findModelPrice({ "gpt-4o": A, "openai/gpt-4o": B }, "gpt-4o")).toEqual({
      key: "gpt-4o",
      price: A,
    });
  });

  it("a key ending in /<name> matches", () => {
    expect(findModelPrice({ "vertex_ai/gemini-2.5-pro": A }, "gemini-2.5-pro")).toEqual({
      key: "vertex_ai/gemini-2.5-pro",
      price: A,
    });
  });

  it("a provider prefix on the model name is stripped", () => {
    expect(findModelPrice({ "gemini-2.5-pro": A }, "gemini/gemini-2.5-pro")).toEqual({
      key: "gemini-2.5-pro",
      price: A,
    });
    expect(findModelPrice({ "azure/gpt-4o": A }, "openai/gpt-4o")).toEqual({
      key: "azure/gpt-4o",
      price: A,
    });
  });

  it("candidates that agree on the price match; conflicting ones match nothing", () => {
    expect(findModelPrice({ "azure/gpt-4o": A, "openai/gpt-4o": A }, "gpt-4o")?.price).toEqual(A);
    expect(findModelPrice({ "azure/gpt-4o": A, "openai/gpt-4o": B }, "gpt-4o")).toBeNull();
  });

  it("no partial or case-insensitive guesses", () => {
    const models = { "gpt-4o": A };
    expect(findModelPrice(models, "gpt-4o-2024-08-06")).toBeNull();
    expect(findModelPrice(models, "GPT-4o")).toBeNull();
    expect(findModelPrice(models, "")).toBeNull();
    expect(findModelPrice(models, "custom/gpt-4o")).toBeNull();
  });
});
