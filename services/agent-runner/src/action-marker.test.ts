import { describe, expect, it } from "vitest";
import { parseActionMarker } from "./action-marker.ts";

describe("parseActionMarker", () => {
  it("YES on the last line: acted, and the line is stripped", () => {
    expect(parseActionMarker("## Report\nRestarted pod-1.\n\nYES\n")).toEqual({
      text: "## Report\nRestarted pod-1.",
      actionsExecuted: true,
    });
  });

  it("NO on the last line: did not act", () => {
    expect(parseActionMarker("Evidence is ambiguous; not acting.\nNO")).toEqual({
      text: "Evidence is ambiguous; not acting.",
      actionsExecuted: false,
    });
  });

  it("tolerates case and markdown around the word", () => {
    expect(parseActionMarker("Done.\n**Yes**").actionsExecuted).toBe(true);
    expect(parseActionMarker("Done.\n`no`.").actionsExecuted).toBe(false);
  });

  it("missing or unreadable line: unknown (null), text kept as written", () => {
    const text = "Restarted pod-1 and it recovered.";
    expect(parseActionMarker(text)).toEqual({ text, actionsExecuted: null });
    const prose = "Report.\nYES, I restarted the pod";
    expect(parseActionMarker(prose)).toEqual({ text: prose, actionsExecuted: null });
    // A YES earlier in the text is not the marker.
    expect(parseActionMarker("YES\nthen more text").actionsExecuted).toBeNull();
  });
});
