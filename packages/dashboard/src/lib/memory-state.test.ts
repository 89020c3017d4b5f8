import { describe, expect, it } from "vitest";
import {
  DEFAULT_MEMORY_STATE,
  formatMemoryState,
  memoryQueryString,
  parseMemoryState,
} from "./memory-state.ts";

describe("the Memories page's URL state", () => {
  it("round-trips through the query string, defaults left out", () => {
    expect(formatMemoryState(DEFAULT_MEMORY_STATE)).toBe("");
    const state = { category: "semantic", valence: "negative", state: "live", page: 3 } as const;
    expect(formatMemoryState(state)).toBe(
      "category=semantic&valence=negative&deprecated=false&page=3",
    );
    expect(parseMemoryState(`?${formatMemoryState(state)}`)).toEqual(state);
    expect(parseMemoryState("?deprecated=true").state).toBe("deprecated");
  });

  it("falls back to the defaults for unknown values", () => {
    expect(parseMemoryState("?category=hunch&valence=great&deprecated=maybe&page=-2")).toEqual(
      DEFAULT_MEMORY_STATE,
    );
    expect(parseMemoryState("?page=1.5").page).toBe(1);
  });

  it("asks the API for one page of the filters", () => {
    expect(memoryQueryString({ ...DEFAULT_MEMORY_STATE, state: "deprecated", page: 2 })).toBe(
      "deprecated=true&page=2&page_size=20",
    );
  });
});
