import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { type EmbeddingModel, embedMany, type JSONValue } from "ai";
import type { EmbeddingConfig, EmbedRequest, EmbedResult, EmbedTask } from "../embed-request.ts";
import { resolveApiKey } from "./credentials.ts";
import { scriptedEmbedding } from "./scripted-embedder.ts";
import type { SecretLookup } from "./types.ts";

/** Gemini's task types for retrieval: stored memories are documents, a search is a query. */
const GOOGLE_TASK_TYPE: Record<EmbedTask, string> = {
  document: "RETRIEVAL_DOCUMENT",
  query: "RETRIEVAL_QUERY",
};

function modelFor(config: EmbeddingConfig, getSecret: SecretLookup): EmbeddingModel {
  const baseURL = config.base_url || undefined;
  switch (config.provider) {
    case "google": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createGoogleGenerativeAI({ apiKey, ...(baseURL ? { baseURL } : {}) }).embeddingModel(
        config.model,
      );
    }
    case "openai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) }).embeddingModel(config.model);
    }
    case "scripted":
      throw new Error("the scripted embedder calls no model");
    default: {
      const unknown: never = config.provider;
      throw new Error(`unknown embedding provider ${String(unknown)}`);
    }
  }
}

function providerOptions(
  config: EmbeddingConfig,
  task: EmbedTask,
): Record<string, Record<string, JSONValue>> {
  const dimensions = config.dimensions > 0 ? config.dimensions : undefined;
  switch (config.provider) {
    case "google":
      return {
        google: {
          taskType: GOOGLE_TASK_TYPE[task],
          ...(dimensions ? { outputDimensionality: dimensions } : {}),
        },
      };
    case "openai":
      return dimensions ? { openai: { dimensions } } : {};
    default:
      return {};
  }
}

/**
 * Embeds the request's texts once, through the AI SDK's `embedMany` and the provider's
 * embedding API (Gemini `:embedContent`/`:batchEmbedContents`, OpenAI `/embeddings`). The SDK
 * does not retry: the caller's retry loop (retry.ts) owns retries. Throws the SDK's errors
 * (APICallError with the HTTP status) for errors.ts to classify.
 */
export async function embedWithProvider(
  request: EmbedRequest,
  deps: { getSecret: SecretLookup; signal: AbortSignal },
): Promise<EmbedResult> {
  const { config, texts, task } = request;
  if (config.provider === "scripted") return embedScripted(texts, config.dimensions);
  const result = await embedMany({
    model: modelFor(config, deps.getSecret),
    values: texts,
    maxRetries: 0,
    abortSignal: deps.signal,
    providerOptions: providerOptions(config, task),
  });
  const tokens = result.usage.tokens;
  return {
    embeddings: result.embeddings,
    inputTokens: Number.isFinite(tokens) ? tokens : 0,
  };
}

/**
 * The deterministic embedder, for provider `scripted` and for servers that answer every request
 * from a script. Its token count is an estimate (4 characters a token), as the scripted
 * Generate reports.
 */
export function embedScripted(texts: string[], dimensions: number): EmbedResult {
  return {
    embeddings: texts.map((text) => scriptedEmbedding(text, dimensions)),
    inputTokens: texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0),
  };
}
