import { describe, expect, test } from "vitest";
import { splitToolName } from "./controllers/tool-execution.ts";
import {
  estimateTokens,
  STORAGE_MAX_TOKENS,
  SUMMARIZATION_MAX_TOKENS,
  truncateForStorage,
  truncateForSummarization,
} from "./truncation.ts";

describe("truncation", () => {
  test("estimates ~4 characters per token", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
  });

  test("storage keeps 8K tokens and says what was cut", () => {
    const small = "x".repeat(STORAGE_MAX_TOKENS * 4);
    expect(truncateForStorage(small)).toBe(small);
    const big = "y".repeat(STORAGE_MAX_TOKENS * 4 + 4_000);
    const cut = truncateForStorage(big);
    expect(cut.startsWith("y".repeat(STORAGE_MAX_TOKENS * 4))).toBe(true);
    expect(cut).toContain(
      "[TRUNCATED: stored result cut at 8000 tokens; about 1000 more tokens omitted]",
    );
  });

  test("summarization input keeps 100K tokens, independently of storage", () => {
    const text = "z".repeat(SUMMARIZATION_MAX_TOKENS * 4 + 40);
    const cut = truncateForSummarization(text);
    expect(cut.length).toBeGreaterThan(SUMMARIZATION_MAX_TOKENS * 4);
    expect(cut).toContain("summarization input cut at 100000 tokens");
    const medium = "m".repeat(STORAGE_MAX_TOKENS * 4 * 2);
    expect(truncateForSummarization(medium)).toBe(medium);
  });
});

describe("tool names", () => {
  test("server.tool and server__tool both split into server and tool", () => {
    expect(splitToolName("kubernetes-server.pods_list")).toEqual({
      server: "kubernetes-server",
      tool: "pods_list",
    });
    expect(splitToolName("everything__get-env")).toEqual({ server: "everything", tool: "get-env" });
    expect(splitToolName("bare")).toEqual({ server: "", tool: "bare" });
  });
});
