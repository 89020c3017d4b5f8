import type { SystemConfigResponse } from "@tarsy/contracts";
import type { ResolvedFallbackEntry } from "./fallback.ts";
import { forEachFallbackListSelector, forEachFallbackProvidersList } from "./fallback-lists.ts";
import { formatPath } from "./interpolate.ts";
import { effectiveReasoningEffort } from "./reasoning-effort.ts";
import { looksSecret, REDACTED, redactArgs, redactHeaders, redactUrl } from "./redact.ts";
import {
  isScoringEnabled,
  resolveComposeConfig,
  resolveExecutiveSummaryConfig,
  resolveOrchestratorLimits,
  resolveSubAgentRefs,
  subAgentCatalog,
} from "./resolve.ts";
import type {
  ChainConfig,
  McpServerConfig,
  OrchestratorLimits,
  SubAgentRef,
  TarsyConfig,
} from "./types.ts";

type OrchestratorView = SystemConfigResponse["defaults"]["orchestrator"];

function orchestratorView(limits: OrchestratorLimits): OrchestratorView {
  return {
    max_concurrent_agents: limits.max_concurrent_agents,
    agent_timeout_ms: limits.agent_timeout_ms ?? null,
    max_budget_ms: limits.max_budget_ms ?? null,
  };
}

function resolvedModelView(model: {
  llm_provider_name: string;
  llm_backend: string;
  fallback_providers: readonly ResolvedFallbackEntry[];
}): SystemConfigResponse["chains"][number]["compose"] {
  return {
    llm_provider: model.llm_provider_name,
    llm_backend: model.llm_backend,
    fallbacks: model.fallback_providers.map((f) => ({
      llm_provider: f.provider_name,
      llm_backend: f.backend,
    })),
  };
}

const refNames = (refs: readonly SubAgentRef[] | undefined) => (refs ?? []).map((r) => r.name);

/** Each agent of a stage that has a sub-agent catalog → the catalog's names. */
function stageSubAgents(
  config: TarsyConfig,
  chain: ChainConfig,
  stageIndex: number,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const agentRef of chain.stages[stageIndex]?.agents ?? []) {
    const catalog = subAgentCatalog(
      config,
      resolveSubAgentRefs(config, chain, { kind: "stage", stageIndex, agentRef }),
    );
    if (catalog.length > 0) out[agentRef.name] = catalog.map((entry) => entry.name);
  }
  return out;
}

/** A URL without credentials, query or fragment (they can carry keys); null if unparsable. */
function publicUrl(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const { protocol, host, pathname } = new URL(url);
    return `${protocol}//${host}${pathname}`;
  } catch {
    return null;
  }
}

const sorted = (keys: Iterable<string>) => [...keys].sort();

function mcpServerView(server: McpServerConfig): SystemConfigResponse["mcp_servers"][number] {
  const t = server.transport;
  const transport =
    t.type === "stdio"
      ? {
          type: t.type,
          command: looksSecret(t.command) ? REDACTED : t.command,
          args: redactArgs(t.args),
          env_keys: sorted(Object.keys(t.env)),
          url: null,
          bearer_token_set: false,
          verify_ssl: null,
          timeout_ms: null,
          custom_headers: {},
          custom_header_keys: [],
          session_cleanup_url: null,
        }
      : {
          type: t.type,
          command: null,
          args: [],
          env_keys: [],
          url: redactUrl(t.url),
          bearer_token_set: Boolean(t.bearer_token),
          verify_ssl: t.verify_ssl,
          timeout_ms: t.timeout_ms ?? null,
          custom_headers: redactHeaders(t.custom_headers),
          custom_header_keys: sorted(Object.keys(t.custom_headers)),
          session_cleanup_url: redactUrl(t.session_cleanup_url),
        };
  return {
    id: server.id,
    enabled: server.enabled !== false,
    transport,
    auth_mode: server.auth.mode,
    data_masking_enabled: server.data_masking.enabled,
    summarization_enabled: server.summarization.enabled,
    tool_classes: Object.entries(server.tools ?? {}).map(([pattern, c]) => ({
      pattern,
      mutating: c.mutating,
    })),
  };
}

/**
 * The configuration as `GET /api/v1/system/config` answers it (the dashboard's viewer, `tarsy
 * config check --output json`). Built field by field from what is
 * safe (never by copying an object and deleting secrets), so a new secret field in the
 * config cannot leak by default.
 */
export function configView(config: TarsyConfig): SystemConfigResponse {
  const { defaults } = config;
  return {
    defaults: {
      llm_provider: defaults.llm_provider,
      alert_type: defaults.alert_type,
      max_iterations: defaults.max_iterations,
      label_map: defaults.label_map ?? null,
      agents: Object.entries(defaults.agents ?? {}).map(([name, pairing]) => ({
        name,
        llm_provider: pairing.llm_provider ?? null,
        llm_backend: pairing.llm_backend ?? null,
        fallback_list: pairing.fallback_list ?? null,
      })),
      summarization: defaults.summarization
        ? {
            llm_provider: defaults.summarization.llm_provider ?? null,
            llm_backend: defaults.summarization.llm_backend ?? null,
            fallback_list: defaults.summarization.fallback_list ?? null,
          }
        : null,
      orchestrator: orchestratorView(resolveOrchestratorLimits(config)),
      compose: {
        llm_provider: defaults.compose_provider ?? null,
        llm_backend: defaults.compose_backend ?? null,
        fallback_list: defaults.compose_fallback_list ?? null,
      },
      executive_summary: {
        llm_provider: defaults.executive_summary_provider ?? null,
        llm_backend: defaults.executive_summary_backend ?? null,
        fallback_list: defaults.executive_summary_fallback_list ?? null,
      },
      memory: {
        enabled: defaults.memory.enabled,
        max_inject: defaults.memory.max_inject,
        reflector_memory_limit: defaults.memory.reflector_memory_limit,
        embedding: {
          provider: defaults.memory.embedding.provider,
          model: defaults.memory.embedding.model,
          api_key_env: defaults.memory.embedding.api_key_env,
          dimensions: defaults.memory.embedding.dimensions,
          base_url: publicUrl(defaults.memory.embedding.base_url),
        },
      },
    },
    chains: [...config.chains.values()].map((chain) => ({
      id: chain.id,
      description: chain.description ?? null,
      alert_types: chain.alert_types,
      llm_provider: chain.llm_provider ?? defaults.llm_provider,
      compose: resolvedModelView(resolveComposeConfig(config, chain)),
      executive_summary: resolvedModelView(resolveExecutiveSummaryConfig(config, chain)),
      chat_enabled: chain.chat.enabled,
      scoring_enabled: isScoringEnabled(config, chain),
      label_map: chain.label_map ?? null,
      builtin: chain.builtin,
      sub_agents: refNames(chain.sub_agents),
      chat_sub_agents: chain.chat.enabled
        ? subAgentCatalog(config, resolveSubAgentRefs(config, chain, { kind: "chat" })).map(
            (entry) => entry.name,
          )
        : [],
      stages: chain.stages.map((stage, index) => ({
        name: stage.name,
        agents: stage.agents.map((a) => a.name),
        replicas: stage.replicas,
        success_policy: stage.success_policy ?? defaults.success_policy ?? null,
        sub_agents: stageSubAgents(config, chain, index),
      })),
    })),
    agents: [...config.agents.values()].map((agent) => ({
      name: agent.name,
      description: agent.description ?? null,
      mcp_servers: agent.mcp_servers,
      llm_backend: agent.llm_backend ?? null,
      max_iterations: agent.max_iterations ?? null,
      sub_agents: refNames(agent.sub_agents),
      orchestrator: orchestratorView(resolveOrchestratorLimits(config, agent)),
      builtin: agent.builtin,
    })),
    label_maps: [...config.labelMaps.entries()].map(([name, map]) => ({
      name,
      multi: map.multi,
      instructions: map.instructions ?? null,
      labels: map.labels.map((spec) => ({ label: spec.label, description: spec.description })),
      builtin: map.builtin,
    })),
    fallback_lists: [...config.fallbackLists.entries()].map(([name, entries]) => ({
      name,
      entries: entries.map((e) => ({ llm_provider: e.provider, llm_backend: e.backend })),
    })),
    fallback_selectors: fallbackSelectorsView(config),
    skills: [...config.skills.values()].map((skill) => ({
      name: skill.name,
      description: skill.description,
    })),
    llm_providers: [...config.llmProviders.values()].map((provider) => ({
      name: provider.name,
      type: provider.type,
      model: provider.model,
      base_url: publicUrl(provider.base_url),
      api_key_env: provider.api_key_env ?? null,
      credentials_env: provider.credentials_env ?? null,
      project_env: provider.project_env ?? null,
      location_env: provider.location_env ?? null,
      native_tools: provider.native_tools ? { ...provider.native_tools } : null,
      reasoning_effort: effectiveReasoningEffort(provider) ?? null,
      builtin: provider.builtin,
    })),
    mcp_servers: [...config.mcpServers.values()].map(mcpServerView),
    notifications: {
      slack: {
        enabled: config.system.slack.enabled,
        channel: config.system.slack.channel,
        token_env: config.system.slack.token_env,
      },
      webhooks: config.system.notifications.webhooks.map((hook) => ({
        origin: origin(hook.url),
        events: [...hook.events],
        signed: Boolean(hook.secret_env),
      })),
    },
    retention: { ...config.system.retention },
    prompt_caching: { enabled: config.system.prompt_caching.enabled },
    cost_estimation: {
      enabled: config.system.cost_estimation.enabled,
      model_rates: Object.fromEntries(
        Object.entries(config.system.cost_estimation.model_rates).map(([model, rate]) => [
          model,
          {
            input_per_million: rate.input_per_million,
            output_per_million: rate.output_per_million,
          },
        ]),
      ),
      promotions: config.system.cost_estimation.promotions.map((p) => ({
        id: p.id,
        model: p.model,
        start: p.start_ms === null ? null : new Date(p.start_ms).toISOString(),
        end: new Date(p.end_ms).toISOString(),
        input_per_million: p.input_per_million,
        output_per_million: p.output_per_million,
      })),
    },
  };
}

function origin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** Every `fallback_list` selector and deprecated `fallback_providers` list, as written. */
function fallbackSelectorsView(config: TarsyConfig): SystemConfigResponse["fallback_selectors"] {
  const out: SystemConfigResponse["fallback_selectors"] = [];
  forEachFallbackListSelector(config, (_file, path, name) => {
    out.push({ path: formatPath(path), fallback_list: name, fallback_providers: null });
  });
  forEachFallbackProvidersList(config, (_file, path, list) => {
    out.push({
      path: formatPath(path),
      fallback_list: null,
      fallback_providers: list.map((e) => ({ provider: e.provider, backend: e.backend })),
    });
  });
  return out;
}
