import type { ConfigIssue } from "./errors.ts";
import { forEachFallbackProvidersList, referencedFallbackLists } from "./fallback-lists.ts";
import type { FallbackProviderEntry, LlmProviderConfig, TarsyConfig } from "./types.ts";

/** The Vertex AI fields that name an environment variable, and what that variable holds. */
const VERTEX_ENV_FIELDS = [
  ["credentials_env", "a service-account JSON key or the path to one"],
  ["project_env", "the GCP project"],
  ["location_env", "the GCP location"],
] as const;

/**
 * Every provider a fallback walk may switch to: the entries of each deprecated
 * `fallback_providers` list and of each catalog list a `fallback_list` selector names. Lists
 * of the catalog nobody selects are left out (they need no credentials until selected).
 */
export function fallbackLlmProviders(config: TarsyConfig): Set<string> {
  const names = new Set<string>();
  const addList = (list: readonly FallbackProviderEntry[] | undefined) => {
    for (const entry of list ?? []) names.add(entry.provider);
  };
  forEachFallbackProvidersList(config, (_file, _path, list) => addList(list));
  for (const name of referencedFallbackLists(config)) addList(config.fallbackLists.get(name));
  return names;
}

/**
 * Every LLM provider name the configuration uses (defaults, chains, stages, synthesis, chat,
 * fallback lists).
 */
export function referencedLlmProviders(config: TarsyConfig): Set<string> {
  const names = new Set<string>([config.defaults.llm_provider, ...fallbackLlmProviders(config)]);
  if (config.defaults.compose_provider !== undefined) names.add(config.defaults.compose_provider);
  const add = (name: string | undefined) => {
    if (name !== undefined) names.add(name);
  };
  add(config.defaults.executive_summary_provider);
  add(config.defaults.scoring?.llm_provider);
  add(config.defaults.summarization?.llm_provider);
  for (const pairing of Object.values(config.defaults.agents ?? {})) add(pairing.llm_provider);
  for (const server of config.mcpServers.values()) add(server.summarization.llm_provider);
  for (const chain of config.chains.values()) {
    add(chain.llm_provider);
    add(chain.executive_summary_provider);
    add(chain.compose_provider);
    add(chain.scoring?.llm_provider);
    add(chain.chat.llm_provider);
    for (const stage of chain.stages) {
      add(stage.synthesis?.llm_provider);
      for (const agent of stage.agents) add(agent.llm_provider);
    }
  }
  return names;
}

/** Provider fields that name the environment variable of a credential. */
const CREDENTIAL_FIELDS = ["api_key_env", "credentials_env", "project_env", "location_env"];

/** An issue about a provider credential variable (fallback keys, Vertex AI variables). */
export function isCredentialIssue(issue: ConfigIssue): boolean {
  return (
    issue.path.startsWith("llm_providers.") &&
    CREDENTIAL_FIELDS.some((field) => issue.path.endsWith(`.${field}`)) &&
    issue.message.startsWith("environment variable ")
  );
}

/**
 * A fallback that cannot authenticate gives a false sense of safety (TARSy refuses to start
 * with one): every fallback provider's key variable must be set in `env`, the environment
 * llm-service calls providers with. Vertex AI providers are checked by `vertexEnvIssues`.
 */
export function fallbackCredentialIssues(
  config: TarsyConfig,
  env: Readonly<Record<string, string | undefined>>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const name of fallbackLlmProviders(config)) {
    const provider = config.llmProviders.get(name);
    if (!provider?.api_key_env || provider.type === "vertexai" || env[provider.api_key_env]) {
      continue;
    }
    issues.push({
      file: config.sources.llmProviders.get(name) ?? "",
      path: `llm_providers.${name}.api_key_env`,
      message: `environment variable ${provider.api_key_env} is not set: fallback LLM provider "${name}" reads its API key from it`,
    });
  }
  return issues;
}

/**
 * A Vertex AI provider in use whose credentials, project or location variable is named but
 * not set cannot work: each such variable is an error (as in TARSy). Providers nobody uses
 * are not checked, so the built-in `vertexai-default` costs nothing until it is chosen.
 */
export function vertexEnvIssues(
  config: TarsyConfig,
  env: Readonly<Record<string, string | undefined>>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const name of referencedLlmProviders(config)) {
    const provider: LlmProviderConfig | undefined = config.llmProviders.get(name);
    if (provider?.type !== "vertexai") continue;
    for (const [field, holds] of VERTEX_ENV_FIELDS) {
      const variable = provider[field];
      if (!variable || env[variable]) continue;
      issues.push({
        file: config.sources.llmProviders.get(name) ?? "",
        path: `llm_providers.${name}.${field}`,
        message: `environment variable ${variable} is not set: LLM provider "${name}" (vertexai) reads ${holds} from it`,
      });
    }
  }
  return issues;
}
