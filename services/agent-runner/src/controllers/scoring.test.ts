import { describe, expect, it } from "vitest";
import { capScore, extractScore, parseOutcome, scanFailureTags } from "./scoring.ts";

describe("the judge's answer", () => {
  it("takes the score from the last non-empty line, in the forms judges write it", () => {
    for (const [line, score] of [
      ["85", 85],
      ["**85**", 85],
      ["Score: 55", 55],
      ["Total score: 100/100", 100],
      ["0", 0],
      ["  72.  ", 72],
    ] as const) {
      expect(extractScore(`Analysis.\n\n${line}\n\n`), line).toEqual({
        score,
        analysis: "Analysis.",
      });
    }
  });

  it("finds no score when the last line is prose, above 100, or a number inside a sentence", () => {
    for (const text of [
      "Good work.",
      "Analysis\n101",
      "I give it 80 points overall",
      "85\nDone.",
    ]) {
      expect(extractScore(text), text).toBeNull();
    }
  });

  it("reads the last outcome verdict; partially correct counts as partial", () => {
    expect(parseOutcome("Outcome: correct\n...\n**Outcome:** wrong")).toBe("wrong");
    expect(parseOutcome("- Outcome: partially correct")).toBe("partial");
    expect(parseOutcome("The outcome is unclear.")).toBeNull();
  });

  it("caps the score into the verdict's band, and leaves it alone without a verdict", () => {
    expect(capScore(80, "wrong")).toBe(34);
    expect(capScore(20, "correct")).toBe(60);
    expect(capScore(70, "partial")).toBe(59);
    expect(capScore(40, "partial")).toBe(40);
    expect(capScore(97, null)).toBe(97);
  });

  it("finds the vocabulary's terms in its order, whatever their case, once each", () => {
    expect(
      scanFailureTags(
        "Wrong_Conclusion here; also incomplete_evidence, and again incomplete_evidence.",
      ),
    ).toEqual(["incomplete_evidence", "wrong_conclusion"]);
    expect(scanFailureTags("A careful investigation.")).toEqual([]);
  });
});
