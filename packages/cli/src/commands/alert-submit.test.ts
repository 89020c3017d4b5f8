import { describe, expect, it } from "vitest";
import { mcpSelection } from "./alert-submit.ts";

describe("--mcp", () => {
  it("becomes the request's mcp selection: whole servers or some of their tools", () => {
    expect(mcpSelection([])).toBeUndefined();
    expect(mcpSelection(["kubernetes", "demo-cluster:get_pods, get_events"])).toEqual({
      servers: [
        { name: "kubernetes" },
        { name: "demo-cluster", tools: ["get_pods", "get_events"] },
      ],
    });
  });

  it("merges a server given twice; the whole server wins over some tools", () => {
    expect(mcpSelection(["a:x", "a:y,x", "b:z", "b"])).toEqual({
      servers: [{ name: "a", tools: ["x", "y"] }, { name: "b" }],
    });
  });

  it("refuses a value without a server or with an empty tool list", () => {
    expect(() => mcpSelection([":x"])).toThrow("names no server");
    expect(() => mcpSelection(["a:"])).toThrow("names no tool");
  });
});
