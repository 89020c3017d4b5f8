import { type RecordedRequest, type Responder, respondJson, type SseEvent } from "./http.ts";

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

/** Gemini's usageMetadata: `prompt` includes `cached` (the implicit cache's part of it). */
export const geminiUsage = (prompt: number, candidates: number, thoughts: number, cached = 0) => ({
  promptTokenCount: prompt,
  candidatesTokenCount: candidates,
  thoughtsTokenCount: thoughts,
  totalTokenCount: prompt + candidates + thoughts,
  ...(cached > 0 && { cachedContentTokenCount: cached }),
});

export const geminiError = (code: number, status: string, message: string) => ({
  error: { code, message, status },
});

/** A request body of Gemini's embedContent (one per text in batchEmbedContents). */
export interface GeminiEmbedContentRequest {
  model: string;
  content: { parts: { text: string }[] };
  taskType?: string;
  outputDimensionality?: number;
}

/** The embed requests a call carried: one for `:embedContent`, several for `:batchEmbedContents`. */
export function geminiEmbedRequests(req: RecordedRequest): GeminiEmbedContentRequest[] {
  if (req.path.includes(":batchEmbedContents")) {
    return (req.body as { requests: GeminiEmbedContentRequest[] }).requests;
  }
  return [req.body as GeminiEmbedContentRequest];
}

/**
 * Answers Gemini's `:embedContent` (`{ embedding }`) and `:batchEmbedContents`
 * (`{ embeddings: [...] }`) with `vectorFor(text, index)` for each text, as the API does.
 */
export function geminiEmbedResponder(
  vectorFor: (text: string, index: number) => number[],
): Responder {
  return async (res, req) => {
    const texts = geminiEmbedRequests(req).map((r) => r.content.parts.map((p) => p.text).join(""));
    const vectors = texts.map((text, index) => ({ values: vectorFor(text, index) }));
    const body = req.path.includes(":batchEmbedContents")
      ? { embeddings: vectors }
      : { embedding: vectors[0] };
    await respondJson(200, body)(res, req);
  };
}
