import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  it("parses Go-style durations to milliseconds", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("40m")).toBe(2_400_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration("0")).toBe(0);
  });

  it("rejects text that is not a duration", () => {
    expect(parseDuration("15")).toBeUndefined();
    expect(parseDuration("15 minutes")).toBeUndefined();
    expect(parseDuration("-5m")).toBeUndefined();
    expect(parseDuration("")).toBeUndefined();
  });

  it("formats milliseconds back the way the YAML writes them", () => {
    expect(formatDuration(900_000)).toBe("15m");
    expect(formatDuration(5_400_000)).toBe("1h30m");
    expect(formatDuration(500)).toBe("500ms");
    expect(formatDuration(120_000)).toBe("2m");
  });
});
