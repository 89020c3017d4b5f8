import { SHARED_MCP_AUTH } from "./mcp-auth.ts";
import { SUMMARIZATION_DEFAULTS } from "./schema.ts";
import {
  type AgentConfig,
  type ChainConfig,
  DEFAULT_APPROVAL,
  type DefaultsConfig,
  type Holiday,
  type LlmProviderConfig,
  type McpServerConfig,
  type MemoryConfig,
  type QueueConfig,
  type SystemConfig,
} from "./types.ts";

/** Built-in definitions; tarsy.yaml / llm-providers.yaml replace any of them by name. */

export const BUILTIN_FILE = "<built-in>";

export const DEFAULT_ITERATION_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_ITERATIONS = 40;
export const DEFAULT_ALERT_TYPE = "kubernetes";
export const DEFAULT_CHAT_AGENT = "ChatAgent";
export const DEFAULT_SYNTHESIS_AGENT = "SynthesisAgent";
export const EXEC_SUMMARY_AGENT = "ExecSummaryAgent";
export const SCORING_AGENT = "ScoringAgent";
/**
 * The agent name of the compose stage's execution (the amended report). Not in the registry:
 * an `agents.ComposeAgent` entry in tarsy.yaml only adds its `custom_instructions`.
 */
export const COMPOSE_AGENT = "ComposeAgent";
/** The built-in sub-agent that only reasons (no tools). */
export const GENERAL_WORKER_AGENT = "GeneralWorker";
/** Sub-agents an orchestrating agent runs at once when no `orchestrator:` block says. */
export const DEFAULT_MAX_CONCURRENT_AGENTS = 5;

export const DEFAULT_RUNBOOK = `# Generic troubleshooting guide

1. Read the alert: which system or service is affected, since when, how badly.
2. Gather context with the available tools: current state, recent changes, events and logs.
3. Find the root cause; prefer evidence over assumptions and say what you could not check.
4. Assess the impact and its scope.
5. Recommend safe next steps (investigation or remediation) and their risks.
`;

export function builtinDefaults(): DefaultsConfig {
  return {
    llm_provider: "google-default",
    max_iterations: DEFAULT_MAX_ITERATIONS,
    alert_type: DEFAULT_ALERT_TYPE,
    runbook: DEFAULT_RUNBOOK,
    alert_masking: { enabled: true, pattern_group: "security" },
    iteration_timeout_ms: DEFAULT_ITERATION_TIMEOUT_MS,
    memory: builtinMemory(),
    approval: { ...DEFAULT_APPROVAL },
  };
}

/** Memory is off by default; enabled, it embeds with Gemini at 768 dimensions (the Go TARSy's). */
export function builtinMemory(): MemoryConfig {
  return {
    enabled: false,
    max_inject: 5,
    reflector_memory_limit: 20,
    embedding: {
      provider: "google",
      model: "gemini-embedding-2-preview",
      api_key_env: "GOOGLE_API_KEY",
      dimensions: 768,
    },
  };
}

const MINUTE = 60_000;

export function builtinQueue(): QueueConfig {
  return {
    worker_count: 5,
    max_concurrent_sessions: 5,
    max_pending_per_alert_type: 500,
    poll_interval_ms: 1000,
    poll_interval_jitter_ms: 500,
    session_timeout_ms: 15 * MINUTE,
    chat_timeout_ms: 15 * MINUTE,
    wrap_up_reserve_ms: 3 * MINUTE,
    resume_interrupted: true,
    graceful_shutdown_timeout_ms: 15 * MINUTE,
    orphan_detection_interval_ms: 5 * MINUTE,
    orphan_threshold_ms: 5 * MINUTE,
    heartbeat_interval_ms: 30_000,
  };
}

export function builtinSystem(): SystemConfig {
  return {
    allowed_ws_origins: [],
    github: { token_env: "GITHUB_TOKEN", api_url: "https://api.github.com" },
    runbooks: {
      repo_url: "",
      cache_ttl_ms: 60_000,
      allowed_domains: ["github.com", "raw.githubusercontent.com"],
      allow_private_addresses: false,
    },
    holidays: [],
    slack: {
      enabled: false,
      token_env: "SLACK_BOT_TOKEN",
      channel: "",
      api_url: "https://slack.com/api/",
      fingerprint_label: "slack_message_fingerprint",
      fingerprint_annotation: "slack_message_fingerprint",
    },
    notifications: { webhooks: [] },
    retention: {
      session_retention_days: 365,
      event_ttl_ms: 7 * 24 * 3600_000,
      cleanup_interval_ms: 12 * 3600_000,
      hard_delete_after_ms: 30 * 24 * 3600_000,
    },
    cost_estimation: { enabled: true, model_rates: {}, promotions: [] },
    prompt_caching: { enabled: true },
  };
}

/** The calendar's holidays when `system.holidays` is omitted or empty (the Go TARSy's list). */
export const DEFAULT_HOLIDAYS: readonly Holiday[] = [
  { date: "01-01", name: "New Year's Day" },
  { date: "12-25", name: "Christmas" },
];

const KUBERNETES_INSTRUCTIONS = `For Kubernetes operations:
- In multi-cluster setups (when a 'configuration_contexts_list' tool exists), list the contexts first and pick the right one before anything else.
- Prefer namespaced queries; cluster-wide listings can be huge.
- Cluster-scoped kinds (Namespace, Node, ClusterRole, PersistentVolume) take no namespace parameter; namespaced kinds (Pod, Deployment, Service, ConfigMap) require one. A "could not find the requested resource" error usually means this was wrong.`;

export function builtinMcpServers(
  env: Readonly<Record<string, string | undefined>>,
): McpServerConfig[] {
  const kubeconfig = env.KUBECONFIG;
  return [
    {
      id: "kubernetes-server",
      transport: {
        type: "stdio",
        command: "npx",
        args: [
          "-y",
          "kubernetes-mcp-server",
          "--read-only",
          "--disable-destructive",
          // Without KUBECONFIG the server uses its own default (in-cluster or ~/.kube/config).
          ...(kubeconfig ? ["--kubeconfig", kubeconfig] : []),
        ],
        env: {},
      },
      instructions: KUBERNETES_INSTRUCTIONS,
      data_masking: {
        enabled: true,
        pattern_groups: ["kubernetes"],
        patterns: ["certificate", "token", "email"],
        custom_patterns: [],
      },
      summarization: { ...SUMMARIZATION_DEFAULTS },
      auth: { ...SHARED_MCP_AUTH },
    },
  ];
}

export function builtinAgents(): AgentConfig[] {
  return [
    {
      name: "KubernetesAgent",
      description: "Kubernetes-specialised investigation agent",
      mcp_servers: ["kubernetes-server"],
      builtin: true,
    },
    {
      name: DEFAULT_CHAT_AGENT,
      description: "Answers follow-up questions about a finished investigation",
      mcp_servers: ["kubernetes-server"],
      builtin: true,
    },
    {
      name: DEFAULT_SYNTHESIS_AGENT,
      description: "Merges the results of parallel investigations",
      mcp_servers: [],
      custom_instructions: `You are an incident commander combining several parallel investigations of the same alert.
Weigh each investigation by the quality of its evidence and reasoning; set aside claims without support.
Where they disagree, say which evidence is stronger and why.
Produce one root-cause analysis of the alert and one set of actionable recommendations.
Focus on the alert, not on comparing the investigators.`,
      builtin: true,
    },
    {
      name: EXEC_SUMMARY_AGENT,
      description: "Writes the short executive summary of a finished session",
      mcp_servers: [],
      builtin: true,
    },
    {
      name: SCORING_AGENT,
      description: "Judges a finished investigation: a 0-100 score and tool improvements",
      mcp_servers: [],
      builtin: true,
    },
    {
      name: GENERAL_WORKER_AGENT,
      description: "General-purpose worker for analysis, summarization and reasoning; no tools",
      mcp_servers: [],
      custom_instructions: `You are a general-purpose worker given one task by another agent.
You have no tools: work from the task's text and your own knowledge and reasoning.
Say what you concluded, why, and what you could not determine from what you were given.`,
      builtin: true,
    },
  ];
}

export function builtinChains(): ChainConfig[] {
  return [
    {
      id: "kubernetes-agent-chain",
      alert_types: ["kubernetes"],
      description: "Single-stage Kubernetes analysis",
      stages: [{ name: "analysis", agents: [{ name: "KubernetesAgent" }], replicas: 1 }],
      chat: { enabled: true },
      builtin: true,
    },
  ];
}

export function builtinLlmProviders(): LlmProviderConfig[] {
  return [
    {
      name: "google-default",
      type: "google",
      model: "gemini-2.5-pro",
      api_key_env: "GOOGLE_API_KEY",
      max_tool_result_tokens: 950_000,
      native_tools: { google_search: true, code_execution: false, url_context: true },
      builtin: true,
    },
    {
      name: "openai-default",
      type: "openai",
      model: "gpt-5",
      api_key_env: "OPENAI_API_KEY",
      max_tool_result_tokens: 250_000,
      builtin: true,
    },
    {
      name: "anthropic-default",
      type: "anthropic",
      model: "claude-sonnet-4-20250514",
      api_key_env: "ANTHROPIC_API_KEY",
      max_tool_result_tokens: 150_000,
      builtin: true,
    },
    {
      name: "xai-default",
      type: "xai",
      model: "grok-4",
      api_key_env: "XAI_API_KEY",
      max_tool_result_tokens: 200_000,
      builtin: true,
    },
    {
      name: "vertexai-default",
      type: "vertexai",
      model: "claude-sonnet-4-5@20250929",
      project_env: "GOOGLE_CLOUD_PROJECT",
      location_env: "GOOGLE_CLOUD_LOCATION",
      max_tool_result_tokens: 150_000,
      builtin: true,
    },
  ];
}

/** The environment variable a provider type reads its key from when `api_key_env` is unset. */
export const DEFAULT_API_KEY_ENV: Partial<Record<LlmProviderConfig["type"], string>> = {
  google: "GOOGLE_API_KEY",
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  xai: "XAI_API_KEY",
};

export const DEFAULT_MAX_TOOL_RESULT_TOKENS = 100_000;
