import { describe, expect, it } from "vitest";
import { requestLlmConfig } from "./llm-attempt.ts";

describe("requestLlmConfig", () => {
  const gemini = {
    provider: "google",
    model: "gemini-2.5-pro",
    backend: "google-native",
    nativeTools: { googleSearch: true, urlContext: true },
  };

  it("sends the provider's native tools by default", () => {
    expect(requestLlmConfig(gemini, {})).toBe(gemini);
    expect(requestLlmConfig(gemini, { nativeTools: true })).toBe(gemini);
  });

  it("leaves them out of a call that turns them off (summarization)", () => {
    expect(requestLlmConfig(gemini, { nativeTools: false })).toEqual({
      provider: "google",
      model: "gemini-2.5-pro",
      backend: "google-native",
    });
  });
});
