import type { SseEvent } from "./http.ts";

/** One Gemini streamGenerateContent (alt=sse) response. */
export function geminiChunk(
  parts: Record<string, unknown>[],
  extra: {
    finishReason?: string;
    usage?: Record<string, number>;
    candidate?: Record<string, unknown>;
  } = {},
): SseEvent {
  return {
    data: {
      candidates: [
        {
          content: { role: "model", parts },
          index: 0,
          ...(extra.finishReason ? { finishReason: extra.finishReason } : {}),
          ...extra.candidate,
        },
      ],
      ...(extra.usage ? { usageMetadata: extra.usage } : {}),
      modelVersion: "gemini-2.5-pro",
    },
  };
}

export const geminiUsage = (prompt: number, candidates: number, thoughts: number) => ({
  promptTokenCount: prompt,
  candidatesTokenCount: candidates,
  thoughtsTokenCount: thoughts,
  totalTokenCount: prompt + candidates + thoughts,
});

export const geminiError = (code: number, status: string, message: string) => ({
  error: { code, message, status },
});
