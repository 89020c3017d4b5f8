import type { InvestigationMemory } from "@tarsy/db";
import { describe, expect, it } from "vitest";
import { memoriesToShow } from "./feedback-reflection.ts";

const memory = (id: string, deprecated = false): InvestigationMemory =>
  ({ id, content: `memory ${id}`, deprecated }) as InvestigationMemory;

describe("the memories the feedback reflector is shown", () => {
  it("the session's own first, then similar ones, each once, never deprecated ones, at most the limit", () => {
    const own = [memory("a"), memory("b", true), memory("c")];
    const similar = [memory("c"), memory("d"), memory("e", true), memory("f")];
    expect(memoriesToShow(own, similar, 10).map((m) => m.id)).toEqual(["a", "c", "d", "f"]);
    expect(memoriesToShow(own, similar, 3).map((m) => m.id)).toEqual(["a", "c", "d"]);
    expect(memoriesToShow([], [], 5)).toEqual([]);
  });
});
