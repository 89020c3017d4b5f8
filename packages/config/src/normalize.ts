import { NOTIFICATION_EVENTS } from "@tarsy/contracts";
import { DEFAULT_API_KEY_ENV, DEFAULT_MAX_TOOL_RESULT_TOKENS } from "./builtins.ts";
import { type McpAuthConfig, SHARED_MCP_AUTH } from "./mcp-auth.ts";
import {
  type RawAgent,
  type RawChain,
  type RawDefaults,
  type RawFallbackLists,
  type RawLlmProvider,
  type RawMcpServer,
  type RawMemory,
  type RawOrchestrator,
  type RawQueue,
  type RawSubAgentRef,
  type RawSystem,
  SUMMARIZATION_DEFAULTS,
} from "./schema.ts";
import type {
  AgentConfig,
  ChainConfig,
  DefaultsConfig,
  FallbackProviderEntry,
  LlmProviderConfig,
  McpServerConfig,
  MemoryConfig,
  OrchestratorLimits,
  QueueConfig,
  StageConfig,
  SubAgentRef,
  SystemConfig,
} from "./types.ts";

/** Turns parsed YAML entries into the typed registry entries (defaults filled in). */

/** Copies only the keys whose value is defined, so optional fields stay absent. */
function defined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}

export function toMcpServer(id: string, raw: RawMcpServer): McpServerConfig {
  const t = raw.transport;
  const transport: McpServerConfig["transport"] =
    t.type === "stdio"
      ? { type: "stdio", command: t.command ?? "", args: t.args ?? [], env: t.env ?? {} }
      : {
          type: t.type,
          url: t.url ?? "",
          ...defined({ bearer_token: t.bearer_token || undefined, timeout_ms: t.timeout }),
          verify_ssl: t.verify_ssl ?? true,
          custom_headers: { ...t.headers, ...t.custom_headers },
          ...defined({ session_cleanup_url: t.session_cleanup_url || undefined }),
        };
  const masking = raw.data_masking;
  return {
    id,
    transport,
    ...defined({ instructions: raw.instructions }),
    data_masking: masking
      ? {
          enabled: masking.enabled,
          pattern_groups: masking.pattern_groups,
          patterns: masking.patterns,
          custom_patterns: masking.custom_patterns.map((p, index) => ({
            name: p.name ?? `custom_${index + 1}`,
            pattern: p.pattern,
            replacement: p.replacement,
            ...defined({ description: p.description }),
          })),
        }
      : { enabled: false, pattern_groups: [], patterns: [], custom_patterns: [] },
    summarization: raw.summarization ? defined(raw.summarization) : { ...SUMMARIZATION_DEFAULTS },
    auth: raw.auth ? mcpAuth(raw.auth) : { ...SHARED_MCP_AUTH },
    ...defined({
      enabled: raw.enabled,
      warm_pool: raw.warm_pool,
      idempotent: raw.idempotent,
      tools: raw.tools,
    }),
  };
}

function mcpAuth(raw: NonNullable<RawMcpServer["auth"]>): McpAuthConfig {
  const { token_exchange: exchange, ...rest } = raw;
  return exchange ? { ...rest, token_exchange: { ...exchange, ...defined(exchange) } } : rest;
}

/** A `sub_agents` list with only the keys each reference sets. */
function toSubAgents(raw: readonly RawSubAgentRef[] | undefined): SubAgentRef[] | undefined {
  return raw?.map((ref) => ({ ...defined(ref), name: ref.name }));
}

function toOrchestrator(raw: RawOrchestrator | undefined): Partial<OrchestratorLimits> | undefined {
  if (!raw) return undefined;
  return defined({
    max_concurrent_agents: raw.max_concurrent_agents,
    agent_timeout_ms: raw.agent_timeout,
    max_budget_ms: raw.max_budget,
  });
}

export function toAgent(name: string, raw: RawAgent): AgentConfig {
  return {
    name,
    ...defined({
      description: raw.description,
      custom_instructions: raw.custom_instructions,
      llm_backend: raw.llm_backend,
      iteration_strategy: raw.iteration_strategy,
      max_iterations: raw.max_iterations,
      native_tools: raw.native_tools,
      type: raw.type,
      skills: raw.skills,
      required_skills: raw.required_skills,
      sub_agents: toSubAgents(raw.sub_agents),
      orchestrator: toOrchestrator(raw.orchestrator),
      approval: raw.approval,
      approval_timeout_ms: raw.approval_timeout,
    }),
    mcp_servers: raw.mcp_servers,
    builtin: false,
  };
}

export function toChain(id: string, raw: RawChain): ChainConfig {
  const stages: StageConfig[] = raw.stages.map((stage) => ({
    name: stage.name,
    agents: (stage.agents ?? (stage.agent ? [{ name: stage.agent }] : [])).map(
      (a: { name: string; sub_agents?: RawSubAgentRef[] }) =>
        defined({ ...a, sub_agents: toSubAgents(a.sub_agents) }),
    ),
    replicas: stage.replicas,
    ...defined({
      success_policy: stage.success_policy,
      max_iterations: stage.max_iterations,
      iteration_timeout_ms: stage.iteration_timeout,
      synthesis: stage.synthesis && defined(stage.synthesis),
      fallback_list: stage.fallback_list,
      fallback_providers: stage.fallback_providers,
      sub_agents: toSubAgents(stage.sub_agents),
    }),
  }));
  return {
    id,
    alert_types: raw.alert_types,
    ...defined({
      description: raw.description,
      llm_provider: raw.llm_provider,
      llm_backend: raw.llm_backend,
      iteration_strategy: raw.iteration_strategy,
      ...executiveSummary(raw),
      compose_provider: raw.compose_provider,
      compose_backend: raw.compose_backend,
      compose_fallback_list: raw.compose_fallback_list,
      max_iterations: raw.max_iterations,
      mcp_servers: raw.mcp_servers,
      fallback_list: raw.fallback_list,
      fallback_providers: raw.fallback_providers,
      sub_agents: toSubAgents(raw.sub_agents),
      label_map: raw.label_map,
    }),
    stages,
    chat: raw.chat
      ? defined({ ...raw.chat, sub_agents: toSubAgents(raw.chat.sub_agents) })
      : { enabled: true },
    ...(raw.scoring && { scoring: defined(raw.scoring) }),
    builtin: false,
  };
}

export function toLlmProvider(name: string, raw: RawLlmProvider): LlmProviderConfig {
  return {
    name,
    type: raw.type,
    model: raw.model,
    ...defined({
      api_key_env: raw.api_key_env ?? DEFAULT_API_KEY_ENV[raw.type],
      base_url: raw.base_url || undefined,
      temperature: raw.temperature,
      native_tools: raw.native_tools,
      reasoning_effort: raw.reasoning_effort,
      credentials_env: raw.credentials_env,
      project_env: raw.project_env,
      location_env: raw.location_env,
      initial_response_timeout_ms: raw.initial_response_timeout,
      stall_timeout_ms: raw.stall_timeout,
    }),
    max_tool_result_tokens: raw.max_tool_result_tokens ?? DEFAULT_MAX_TOOL_RESULT_TOKENS,
    builtin: false,
  };
}

export function toDefaults(base: DefaultsConfig, raw: RawDefaults | undefined): DefaultsConfig {
  if (!raw) return base;
  return {
    ...base,
    ...defined({
      llm_provider: raw.llm_provider,
      llm_backend: raw.llm_backend,
      iteration_strategy: raw.iteration_strategy,
      max_iterations: raw.max_iterations,
      success_policy: raw.success_policy,
      alert_type: raw.alert_type,
      runbook: raw.runbook,
      alert_masking: raw.alert_masking,
      iteration_timeout_ms: raw.iteration_timeout,
      fallback_list: raw.fallback_list,
      fallback_providers: raw.fallback_providers,
      compose_provider: raw.compose_provider,
      compose_backend: raw.compose_backend,
      compose_fallback_list: raw.compose_fallback_list,
      ...executiveSummary(raw),
      agents:
        raw.agents &&
        Object.fromEntries(Object.entries(raw.agents).map(([name, p]) => [name, defined(p)])),
      summarization: raw.summarization && defined(raw.summarization),
      scoring: raw.scoring && defined(raw.scoring),
      memory: raw.memory && toMemory(base.memory, raw.memory),
      label_map: raw.label_map,
      orchestrator: toOrchestrator(raw.orchestrator),
    }),
    approval: {
      timeout_ms: raw.approval?.timeout ?? base.approval.timeout_ms,
      four_eyes: raw.approval?.four_eyes ?? base.approval.four_eyes,
    },
  };
}

function toMemory(base: MemoryConfig, raw: RawMemory): MemoryConfig {
  const embedding = raw.embedding ?? {};
  return {
    enabled: raw.enabled,
    max_inject: raw.max_inject ?? base.max_inject,
    reflector_memory_limit: raw.reflector_memory_limit ?? base.reflector_memory_limit,
    embedding: {
      ...base.embedding,
      ...defined({
        provider: embedding.provider,
        model: embedding.model,
        api_key_env: embedding.api_key_env,
        dimensions: embedding.dimensions,
        base_url: embedding.base_url || undefined,
      }),
    },
  };
}

export function toQueue(base: QueueConfig, raw: RawQueue | undefined): QueueConfig {
  if (!raw) return base;
  return {
    ...base,
    ...defined({
      worker_count: raw.worker_count,
      max_concurrent_sessions: raw.max_concurrent_sessions,
      max_pending_per_alert_type: raw.max_pending_per_alert_type,
      poll_interval_ms: raw.poll_interval,
      poll_interval_jitter_ms: raw.poll_interval_jitter,
      session_timeout_ms: raw.session_timeout,
      chat_timeout_ms: raw.chat_timeout,
      wrap_up_reserve_ms: raw.wrap_up_reserve,
      resume_interrupted: raw.resume_interrupted,
      graceful_shutdown_timeout_ms: raw.graceful_shutdown_timeout,
      orphan_detection_interval_ms: raw.orphan_detection_interval,
      orphan_threshold_ms: raw.orphan_threshold,
      heartbeat_interval_ms: raw.heartbeat_interval,
    }),
  };
}

export function toSystem(base: SystemConfig, raw: RawSystem | undefined): SystemConfig {
  if (!raw) return base;
  const {
    github,
    runbooks,
    slack,
    notifications,
    retention,
    cost_estimation,
    prompt_caching,
    ...rest
  } = raw;
  return {
    ...base,
    ...defined(rest),
    github: { ...base.github, ...defined(github ?? {}) },
    slack: {
      ...base.slack,
      ...defined(slack ?? {}),
      api_url: withTrailingSlash(slack?.api_url ?? base.slack.api_url),
    },
    notifications: {
      webhooks: (notifications?.webhooks ?? base.notifications.webhooks).map((hook) => ({
        url: hook.url,
        events: [...(hook.events ?? DEFAULT_WEBHOOK_EVENTS)],
        ...defined({ secret_env: hook.secret_env }),
      })),
    },
    retention: {
      ...base.retention,
      ...defined({
        session_retention_days: retention?.session_retention_days,
        event_ttl_ms: retention?.event_ttl,
        cleanup_interval_ms: retention?.cleanup_interval,
        hard_delete_after_ms: retention?.hard_delete_after,
      }),
    },
    cost_estimation: {
      enabled: cost_estimation?.enabled ?? base.cost_estimation.enabled,
      model_rates: { ...base.cost_estimation.model_rates, ...cost_estimation?.model_rates },
      promotions: (cost_estimation?.promotions ?? []).map((promotion, index) => ({
        id: promotion.id ?? `${promotion.model}#${index + 1}`,
        model: promotion.model,
        start_ms: promotion.start === undefined ? null : (parseCostTime(promotion.start) ?? NaN),
        end_ms: parseCostTime(promotion.end) ?? NaN,
        input_per_million: promotion.input_per_million,
        output_per_million: promotion.output_per_million,
      })),
    },
    prompt_caching: { enabled: prompt_caching?.enabled ?? base.prompt_caching.enabled },
    runbooks: {
      ...base.runbooks,
      ...defined({
        repo_url: runbooks?.repo_url,
        cache_ttl_ms: runbooks?.cache_ttl,
        allowed_domains: runbooks?.allowed_domains,
        allow_private_addresses: runbooks?.allow_private_addresses,
      }),
    },
  };
}

/** A webhook's events unless it lists them: every outcome and every action request. */
const DEFAULT_WEBHOOK_EVENTS = NOTIFICATION_EVENTS.filter((event) => event !== "started");

const withTrailingSlash = (url: string) => (url.endsWith("/") ? url : `${url}/`);

/**
 * A promotion bound: RFC 3339 with an offset or `Z`, or `YYYY-MM-DD` (that day's 00:00 UTC).
 * Undefined when it is neither (reported by `costEstimationIssues`).
 */
export function parseCostTime(value: string): number | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const ms = Date.parse(`${value}T00:00:00Z`);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value))
    return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The `fallback_lists` catalog in the deprecated list's shape (`{provider, backend}`). */
export function toFallbackLists(
  raw: RawFallbackLists | undefined,
): Map<string, FallbackProviderEntry[]> {
  return new Map(
    Object.entries(raw ?? {}).map(([name, entries]) => [
      name,
      (entries ?? []).map((e) => ({ provider: e.llm_provider, backend: e.llm_backend })),
    ]),
  );
}

/** The executive-summary pairing, written nested (`executive_summary:`) or flat. */
function executiveSummary(raw: RawChain | RawDefaults) {
  const nested = raw.executive_summary;
  if (!nested) {
    return {
      executive_summary_provider: raw.executive_summary_provider,
      executive_summary_backend: raw.executive_summary_backend,
      executive_summary_fallback_list: raw.executive_summary_fallback_list,
    };
  }
  return {
    executive_summary_provider: nested.llm_provider,
    executive_summary_backend: nested.llm_backend,
    executive_summary_fallback_list: nested.fallback_list,
    executive_summary_nested: true,
  };
}
