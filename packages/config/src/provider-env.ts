import type { ConfigIssue } from "./errors.ts";
import type { LlmProviderConfig, TarsyConfig } from "./types.ts";

/** The Vertex AI fields that name an environment variable, and what that variable holds. */
const VERTEX_ENV_FIELDS = [
  ["credentials_env", "a service-account JSON key or the path to one"],
  ["project_env", "the GCP project"],
  ["location_env", "the GCP location"],
] as const;

/** Every LLM provider name the configuration uses (defaults, chains, stages, synthesis, chat). */
export function referencedLlmProviders(config: TarsyConfig): Set<string> {
  const names = new Set<string>([config.defaults.llm_provider]);
  const add = (name: string | undefined) => {
    if (name !== undefined) names.add(name);
  };
  for (const chain of config.chains.values()) {
    add(chain.llm_provider);
    add(chain.executive_summary_provider);
    add(chain.chat.llm_provider);
    for (const stage of chain.stages) {
      add(stage.synthesis?.llm_provider);
      for (const agent of stage.agents) add(agent.llm_provider);
    }
  }
  return names;
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
