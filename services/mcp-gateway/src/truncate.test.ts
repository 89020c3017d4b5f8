import { describe, expect, it } from "vitest";
import { fitContent } from "./truncate.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

describe("fitContent", () => {
  const wrap = (content: string) => JSON.stringify({ v: 1, content, other: "field" });

  it("leaves content that fits alone", () => {
    expect(fitContent("small", 1000, wrap)).toEqual({ content: "small", truncated: false });
  });

  it("cuts below the limit, counting JSON escaping and multi-byte text, with a visible marker", () => {
    const content = `${'"quoted"\n'.repeat(2000)}${"é😀".repeat(3000)}`;
    const limit = 8_000;
    const fitted = fitContent(content, limit, wrap);
    expect(fitted.truncated).toBe(true);
    expect(bytes(wrap(fitted.content))).toBeLessThanOrEqual(limit);
    expect(bytes(wrap(fitted.content))).toBeGreaterThan(limit - 64);
    expect(fitted.content).toMatch(/\[TRUNCATED by mcp-gateway: the tool output was \d+ bytes/);
    expect(
      content.startsWith(fitted.content.slice(0, fitted.content.indexOf("\n\n[TRUNCATED"))),
    ).toBe(true);
    // No lone surrogate left behind.
    expect(() => encodeURIComponent(fitted.content)).not.toThrow();
  });
});
