import { describe, expect, it } from "vitest";
import { detectLanguage, wasMasked } from "./format.ts";

describe("detectLanguage", () => {
  it("tells JSON, YAML and text apart", () => {
    expect(detectLanguage('{\n  "pod": "payments-api"\n}')).toBe("json");
    expect(detectLanguage("[1, 2]")).toBe("json");
    expect(detectLanguage("alertname: PodCrashLooping\nnamespace: payments\n")).toBe("yaml");
    expect(detectLanguage("---\nkind: Pod\nmetadata:\n  name: x")).toBe("yaml");
    expect(detectLanguage("{ not json")).toBe("text");
    expect(detectLanguage("payments-api pods stuck in Pending")).toBe("text");
    expect(detectLanguage("note: one line")).toBe("text");
  });
});

describe("wasMasked", () => {
  it("finds what the masking writes, and nothing else", () => {
    expect(wasMasked('{"password": "[MASKED_SECRET_DATA]"}')).toBe(true);
    expect(wasMasked("token [MASKED_GITHUB_TOKEN] used")).toBe(true);
    expect(
      wasMasked("[REDACTED: data masking failure — tool result could not be safely processed]"),
    ).toBe(true);
    expect(wasMasked("MASKED_SECRET_DATA without brackets, [masked_x]")).toBe(false);
  });
});
