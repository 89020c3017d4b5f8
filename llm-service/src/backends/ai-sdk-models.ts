import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { JSONValue } from "ai";
import { ConfigError } from "../errors.ts";
import type { LlmConfig } from "../request.ts";
import { resolveApiKey } from "./credentials.ts";
import { geminiThinkingLevel, reasoningEffort } from "./reasoning-effort.ts";
import type { SecretLookup } from "./types.ts";
import type { VertexCredentialStore } from "./vertex-auth.ts";
import { resolveVertexTarget, vertexModel, vertexPublisherFor } from "./vertex-models.ts";

/** The AI SDK provider-level model (LanguageModelV3): streamed with `doStream`. */
export type ProviderModel = ReturnType<ReturnType<typeof createOpenAI>["chat"]>;
/** The options `doStream` takes. */
export type ProviderCallOptions = Parameters<ProviderModel["doStream"]>[0];

/** xAI speaks the OpenAI chat-completions protocol; reached through openai-compatible. */
const XAI_BASE_URL = "https://api.x.ai/v1";
/** Vertex AI express mode (API key) for Gemini models, through @ai-sdk/google. */
const VERTEX_EXPRESS_BASE_URL = "https://aiplatform.googleapis.com/v1/publishers/google";

type ProviderOptions = Record<string, Record<string, JSONValue>>;

/** The wire format a request speaks: Vertex AI serves Gemini and Claude in their own. */
export function wireFamily(config: LlmConfig): string {
  return config.provider === "vertexai" ? vertexPublisherFor(config.model) : config.provider;
}

export interface ModelDeps {
  getSecret: SecretLookup;
  vertexCredentials: VertexCredentialStore;
}

/**
 * Vertex AI express mode (an API key, Gemini only) when the config names a key variable;
 * otherwise Google credentials (OAuth) for both publishers.
 */
export function usesVertexExpress(config: LlmConfig): boolean {
  return config.provider === "vertexai" && config.api_key_env !== "";
}

/** Builds the AI SDK model for a provider type. API keys are always passed explicitly. */
export async function modelFor(config: LlmConfig, deps: ModelDeps): Promise<ProviderModel> {
  const { getSecret } = deps;
  const baseURL = config.base_url || undefined;
  if (config.provider === "vertexai" && !usesVertexExpress(config)) {
    const credentials = deps.vertexCredentials.forConfig(config);
    const target = await resolveVertexTarget(config, getSecret, credentials);
    return vertexModel(config, target, credentials);
  }
  switch (config.provider) {
    case "openai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) }).chat(config.model);
    }
    case "anthropic": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) })(config.model);
    }
    case "google": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createGoogleGenerativeAI({ apiKey, ...(baseURL ? { baseURL } : {}) })(config.model);
    }
    case "vertexai": {
      if (vertexPublisherFor(config.model) === "anthropic") {
        throw new ConfigError(
          `Claude on Vertex AI takes Google credentials, not an API key: remove api_key_env from the provider (model ${config.model}) and set credentials_env or application default credentials`,
        );
      }
      const { apiKey } = resolveApiKey(config, getSecret);
      return createGoogleGenerativeAI({ apiKey, baseURL: baseURL ?? VERTEX_EXPRESS_BASE_URL })(
        config.model,
      );
    }
    case "xai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createOpenAICompatible({
        name: "xai",
        apiKey,
        baseURL: baseURL ?? XAI_BASE_URL,
        includeUsage: true,
      }).chatModel(config.model);
    }
    case "openai-compatible":
    case "ollama":
    case "vllm":
    case "litellm": {
      if (!baseURL)
        throw new ConfigError(
          `provider ${config.provider} needs llm_config.base_url (e.g. http://localhost:11434/v1)`,
        );
      const { apiKey } = resolveApiKey(config, getSecret, true);
      return createOpenAICompatible({
        name: config.provider,
        baseURL,
        includeUsage: true,
        ...(apiKey ? { apiKey } : {}),
      }).chatModel(config.model);
    }
    default:
      throw new ConfigError(
        `unknown provider type "${config.provider}" for the langchain backend: use openai, anthropic, google, vertexai, xai or openai-compatible`,
      );
  }
}

/**
 * Thinking and reasoning-effort options in each provider's own parameter. `reasoning_effort`
 * goes to OpenAI/xAI/OpenAI-compatible `reasoning_effort`, Anthropic `output_config.effort`
 * and Gemini `thinkingConfig.thinkingLevel` (an explicit `thinking_level` wins over it there).
 */
export function thinkingOptions(config: LlmConfig): ProviderOptions {
  const budget = config.thinking_budget;
  const level = config.thinking_level.toLowerCase();
  const effort = reasoningEffort(config);
  switch (wireFamily(config)) {
    case "anthropic": {
      const anthropic: Record<string, JSONValue> = {};
      if (budget !== undefined && budget > 0) {
        anthropic.thinking = { type: "enabled", budgetTokens: budget };
      }
      if (effort) anthropic.effort = effort;
      return Object.keys(anthropic).length > 0 ? { anthropic } : {};
    }
    case "google": {
      const geminiLevel = level || (effort ? geminiThinkingLevel(effort) : "");
      if (budget === undefined && !geminiLevel) return {};
      const thinkingConfig: Record<string, JSONValue> = { includeThoughts: true };
      if (geminiLevel) thinkingConfig.thinkingLevel = geminiLevel;
      else if (budget !== undefined) thinkingConfig.thinkingBudget = budget;
      return { google: { thinkingConfig } };
    }
    case "openai": {
      const openAiEffort = effort ?? level;
      return openAiEffort ? { openai: { reasoningEffort: openAiEffort } } : {};
    }
    case "xai":
    case "openai-compatible":
    case "ollama":
    case "vllm":
    case "litellm":
      // createOpenAICompatible reads its options under the provider's name.
      return effort ? { [config.provider]: { reasoningEffort: effort } } : {};
    default:
      return {};
  }
}
