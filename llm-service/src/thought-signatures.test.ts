import { describe, expect, it } from "vitest";
import { createThoughtSignatureCache } from "./thought-signatures.ts";

describe("thought signature cache", () => {
  it("keeps signatures per execution, by call id", () => {
    const cache = createThoughtSignatureCache({ maxEntries: 10, ttlMs: 1000 });
    cache.rememberCall("e1", "call-1", "sig-a");
    cache.rememberText("e1", "sig-t");
    expect(cache.get("e1")?.byCallId.get("call-1")).toBe("sig-a");
    expect(cache.get("e1")?.lastText).toBe("sig-t");
    expect(cache.get("e2")).toBeUndefined();
  });

  it("forgets entries after the TTL", () => {
    let t = 0;
    const cache = createThoughtSignatureCache({ maxEntries: 10, ttlMs: 1000, now: () => t });
    cache.rememberCall("e1", "c", "s");
    t = 999;
    expect(cache.get("e1")).toBeDefined();
    t = 2000;
    expect(cache.get("e1")).toBeUndefined();
  });

  it("is bounded: the least recently written execution goes first", () => {
    const cache = createThoughtSignatureCache({ maxEntries: 2, ttlMs: 60_000 });
    cache.rememberCall("e1", "c", "s1");
    cache.rememberCall("e2", "c", "s2");
    cache.rememberCall("e1", "d", "s1b"); // e1 is now the most recent
    cache.rememberCall("e3", "c", "s3");
    expect(cache.size).toBe(2);
    expect(cache.get("e2")).toBeUndefined();
    expect(cache.get("e1")?.byCallId.size).toBe(2);
  });

  it("ignores requests without an execution id", () => {
    const cache = createThoughtSignatureCache({ maxEntries: 2, ttlMs: 60_000 });
    cache.rememberCall("", "c", "s");
    expect(cache.size).toBe(0);
  });
});
