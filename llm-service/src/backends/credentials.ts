import { ConfigError } from "../errors.ts";
import type { LlmConfig } from "../request.ts";
import type { SecretLookup } from "./types.ts";

/** The env var a provider type reads when the config names none (TARSy's built-in mapping). */
const DEFAULT_KEY_ENV: Record<string, string> = {
  google: "GOOGLE_API_KEY",
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  xai: "XAI_API_KEY",
};

export interface ResolvedKey {
  apiKeyEnv: string;
  apiKey: string | undefined;
}

/**
 * Reads the API key only from the environment variable the config names (or the provider's
 * default). `optional` providers (OpenAI-compatible servers such as Ollama) may run without
 * one. Vertex AI reads a key only in express mode (when api_key_env is set); otherwise it uses
 * Google credentials (vertex-auth.ts).
 */
export function resolveApiKey(
  config: Pick<LlmConfig, "provider" | "api_key_env">,
  getSecret: SecretLookup,
  optional = false,
): ResolvedKey {
  const apiKeyEnv = config.api_key_env || DEFAULT_KEY_ENV[config.provider] || "";
  if (!apiKeyEnv) {
    if (optional) return { apiKeyEnv, apiKey: undefined };
    throw new ConfigError(
      `provider ${config.provider || "(empty)"} needs an API key: set llm_config.api_key_env to the name of the environment variable that holds it`,
    );
  }
  const apiKey = getSecret(apiKeyEnv);
  if (!apiKey) {
    if (optional) return { apiKeyEnv, apiKey: undefined };
    throw new ConfigError(
      `environment variable ${apiKeyEnv} (named by llm_config.api_key_env for provider ${config.provider}) is not set in llm-service's environment: set it to the provider's API key and restart llm-service`,
    );
  }
  return { apiKeyEnv, apiKey };
}
