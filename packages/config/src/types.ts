import type { NotificationEvent } from "@tarsy/contracts";
import type { AuthorizationConfig } from "./authorization.ts";
import type { LabelMapConfig } from "./labels.ts";
import type { McpAuthConfig } from "./mcp-auth.ts";
import type { SkillConfig } from "./skills.ts";
/**
 * The loaded TARSy configuration. Objects keep the YAML's snake_case field names; every
 * duration is parsed to milliseconds and stored in a field named `*_ms` in place of the
 * YAML string (e.g. `queue.session_timeout: 15m` → `queue.session_timeout_ms: 900000`).
 */

export const LLM_BACKENDS = ["google-native", "langchain", "scripted"] as const;

export type LlmBackend = (typeof LLM_BACKENDS)[number];

/** TARSy's older `iteration_strategy` values; each maps to a backend (see `backendForStrategy`). */
export const ITERATION_STRATEGIES = [
  "react",
  "react-stage",
  "react-final-analysis",
  "native-thinking",
  "synthesis",
  "synthesis-native-thinking",
  "langchain",
] as const;
export type IterationStrategy = (typeof ITERATION_STRATEGIES)[number];

/**
 * Agent kinds the Go TARSy's `type` accepts. `default` and `action` are acted on; the others
 * (and an empty value) load and run as a default agent, with a warning for the named ones.
 */
export const AGENT_TYPES = [
  "",
  "default",
  "action",
  "orchestrator",
  "synthesis",
  "scoring",
  "compose",
] as const;
export type AgentTypeSetting = (typeof AGENT_TYPES)[number];
/** What an agent runs as: `action` adds the action safety guidelines to its prompt. */
export type AgentType = "default" | "action";

export const SUCCESS_POLICIES = ["all", "any"] as const;
export type SuccessPolicy = (typeof SUCCESS_POLICIES)[number];

export const LLM_PROVIDER_TYPES = [
  "google",
  "openai",
  "anthropic",
  "xai",
  "vertexai",
  "openai-compatible",
  "scripted",
] as const;
export type LlmProviderType = (typeof LLM_PROVIDER_TYPES)[number];

/**
 * `llm_providers.*.reasoning_effort`: sent in each provider's own parameter (OpenAI/xAI
 * `reasoning_effort`, Anthropic `output_config.effort`, Gemini thinking level).
 */
export const REASONING_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export const TRANSPORT_TYPES = ["stdio", "http", "sse"] as const;
export type TransportType = (typeof TRANSPORT_TYPES)[number];

/** Gemini native tools; `true` enables one. Absent means the provider default. */
export interface NativeToolsConfig {
  google_search?: boolean;
  code_execution?: boolean;
  url_context?: boolean;
}

export interface StdioTransport {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface HttpTransport {
  type: "http" | "sse";
  url: string;
  bearer_token?: string;
  verify_ssl: boolean;
  /** From the YAML's `timeout` (seconds, or a duration string). */
  timeout_ms?: number;
  /** Values may hold `{{.SESSION_ID}}`, filled per agent execution; empty headers are left out. */
  custom_headers: Record<string, string>;
  /** Best-effort DELETE when an execution's session with the server closes (`{{.SESSION_ID}}`). */
  session_cleanup_url?: string;
}

export interface CustomMaskingPattern {
  name: string;
  pattern: string;
  replacement: string;
  description?: string;
}

export interface McpDataMasking {
  enabled: boolean;
  pattern_groups: string[];
  patterns: string[];
  custom_patterns: CustomMaskingPattern[];
}

export interface McpSummarization {
  enabled: boolean;
  size_threshold_tokens: number;
  summary_max_token_limit: number;
  /** The provider that summarizes this server's large results (over `defaults.summarization`). */
  llm_provider?: string;
  /** Its backend (unset with a provider here: that provider's default backend). */
  llm_backend?: LlmBackend;
}

/**
 * `defaults.summarization`: the model that summarizes large tool results (unset: the calling
 * agent's) and the fallback list its calls walk (unset: the calling agent's list).
 */
export interface DefaultSummarization {
  llm_provider?: string;
  llm_backend?: LlmBackend;
  fallback_list?: string;
}

/**
 * A level of the hierarchy that may choose a fallback walk: a named list from the
 * `fallback_lists` catalog, or (deprecated) an inline `fallback_providers` list. Never both.
 */
export interface FallbackSelector {
  fallback_list?: string;
  fallback_providers?: FallbackProviderEntry[];
}

/** `defaults.agents.<name>`: the global model and fallback list of a named agent. */
export interface AgentPairing {
  llm_provider?: string;
  llm_backend?: LlmBackend;
  fallback_list?: string;
}

export interface McpServerConfig {
  id: string;
  transport: StdioTransport | HttpTransport;
  instructions?: string;
  data_masking: McpDataMasking;
  summarization: McpSummarization;
  /** Whose credentials the server's tool calls carry (default: the shared ones). */
  auth: McpAuthConfig;
  /** `false`: not started, not health-checked, not offered to agents (absent means enabled). */
  enabled?: boolean;
  /** Warm sessions kept ready for executions (unset: the gateway's default). */
  warm_pool?: number;
  /**
   * `false`: a call cut off by a runner crash is not repeated when the execution resumes
   * (absent means its tools may run twice).
   */
  idempotent?: boolean;
  /** `tools`: tool name or glob → its class, over the server's annotations (see tool-class.ts). */
  tools?: Record<string, ToolClassOverride>;
}

/** `mcp_servers.<id>.tools.<name or glob>`. */
export interface ToolClassOverride {
  mutating: boolean;
  /** The call's dry-run form, run when its approval is requested (mutating tools only). */
  dry_run?: DryRunForm;
}

/** A dry-run form: `tool` (unset: the call's own) with `arguments` over the call's. */
export interface DryRunForm {
  tool?: string;
  arguments: Record<string, unknown>;
}

/**
 * One entry of a `sub_agents` list: an agent an orchestrating agent may dispatch, with
 * overrides for that dispatch. YAML writes it as a name (short form) or an object (long form).
 */
export interface SubAgentRef {
  name: string;
  llm_provider?: string;
  llm_backend?: LlmBackend;
  /** The `fallback_lists` entry of this dispatch (over `defaults.agents.<name>`, chain, defaults). */
  fallback_list?: string;
  max_iterations?: number;
  /** Replaces the agent definition's servers for this dispatch. */
  mcp_servers?: string[];
  /** Added to the agent definition's `skills` for this dispatch (deduplicated). */
  skills?: string[];
  /** Added to the agent definition's `required_skills` for this dispatch (deduplicated). */
  required_skills?: string[];
}

/**
 * Guardrails of an agent that dispatches sub-agents (`orchestrator:`), resolved from
 * `defaults.orchestrator` and then the agent definition's block.
 */
export interface OrchestratorLimits {
  /** Sub-agents running at once (default 5). */
  max_concurrent_agents: number;
  /** Cap of each sub-agent's run; unset: the parent's remaining time. */
  agent_timeout_ms?: number;
  /** Total time of all sub-agent runs; unset: no total cap. */
  max_budget_ms?: number;
}

/** `defaults.approval`, with its defaults. */
export interface ApprovalDefaults {
  /** A pending request counts as denied after this long (default 30 minutes). */
  timeout_ms: number;
  /** The approver may not be whoever submitted the alert (default off). */
  four_eyes: boolean;
}

export const DEFAULT_APPROVAL: ApprovalDefaults = { timeout_ms: 30 * 60_000, four_eyes: false };

export interface AgentConfig {
  name: string;
  description?: string;
  mcp_servers: string[];
  custom_instructions?: string;
  llm_backend?: LlmBackend;
  /** Kept for TARSy configs that still use it; `llm_backend` wins at the same level. */
  iteration_strategy?: IterationStrategy;
  max_iterations?: number;
  native_tools?: NativeToolsConfig;
  /** `agents.<name>.type` as written (see AGENT_TYPES). */
  type?: AgentTypeSetting;
  /** Skills allowlist: unset offers every skill, `[]` none, a list only those. */
  skills?: string[];
  /** Skills whose bodies go into the system prompt (not offered through `load_skill`). */
  required_skills?: string[];
  /** Agents it may dispatch, unless a chain, stage or stage agent lists its own. */
  sub_agents?: SubAgentRef[];
  /** Its guardrails as an orchestrator, over `defaults.orchestrator`. */
  orchestrator?: Partial<OrchestratorLimits>;
  /** Action agents: whether each mutating call waits for a person (default `required`). */
  approval?: "required" | "auto";
  /** Its requests' timeout in ms (over `defaults.approval.timeout`). */
  approval_timeout_ms?: number;
  builtin: boolean;
}

/** One entry of `fallback_providers`: a registered provider and the backend that drives it. */
export interface FallbackProviderEntry {
  provider: string;
  backend: LlmBackend;
}

/** One entry of `stages[].agents[]`: an agent reference with per-stage overrides. */
export interface StageAgentConfig {
  name: string;
  llm_provider?: string;
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
  max_iterations?: number;
  mcp_servers?: string[];
  fallback_list?: string;
  fallback_providers?: FallbackProviderEntry[];
  /** `stages[].agents[].type`: wins over the agent definition's `type`. */
  type?: AgentTypeSetting;
  /** Replaces the agent definition's `skills` for this stage. */
  skills?: string[];
  /** Replaces the agent definition's `required_skills` for this stage. */
  required_skills?: string[];
  /** Agents it may dispatch here (wins over the stage's, the chain's and the definition's). */
  sub_agents?: SubAgentRef[];
}

export interface SynthesisConfig {
  agent?: string;
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
  llm_provider?: string;
  fallback_list?: string;
}

export interface StageConfig {
  name: string;
  agents: StageAgentConfig[];
  /** Runs the single agent N times as `{Name}-1..N`; 1 means no replicas. */
  replicas: number;
  success_policy?: SuccessPolicy;
  max_iterations?: number;
  /** Per-iteration LLM timeout override for this stage. */
  iteration_timeout_ms?: number;
  synthesis?: SynthesisConfig;
  fallback_list?: string;
  fallback_providers?: FallbackProviderEntry[];
  /** Sub-agents of the stage's agents that list none of their own. */
  sub_agents?: SubAgentRef[];
}

export interface ChatConfig {
  /** Chat is on unless a chain sets `chat.enabled: false`. */
  enabled: boolean;
  agent?: string;
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
  llm_provider?: string;
  mcp_servers?: string[];
  max_iterations?: number;
  fallback_list?: string;
  /** Agents the chat agent may dispatch (wins over the chain's `sub_agents`). */
  sub_agents?: SubAgentRef[];
}

/** The judge of finished sessions: on a chain, over `defaults.scoring`. */
export interface ScoringConfig {
  /** Score each completed session automatically (on demand works either way). */
  enabled?: boolean;
  agent?: string;
  llm_backend?: LlmBackend;
  llm_provider?: string;
  mcp_servers?: string[];
  max_iterations?: number;
  fallback_list?: string;
}

export interface ChainConfig {
  id: string;
  alert_types: string[];
  description?: string;
  llm_provider?: string;
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
  executive_summary_provider?: string;
  /** The compose stage's model on this chain (over `defaults.compose_*`). */
  compose_provider?: string;
  compose_backend?: LlmBackend;
  compose_fallback_list?: string;
  executive_summary_backend?: LlmBackend;
  executive_summary_fallback_list?: string;
  /** Written as the nested `executive_summary:` block (paths in messages follow the YAML). */
  executive_summary_nested?: boolean;
  max_iterations?: number;
  mcp_servers?: string[];
  stages: StageConfig[];
  /** Sub-agents of the chain's stage agents and of its chat, unless a closer level lists some. */
  sub_agents?: SubAgentRef[];
  chat: ChatConfig;
  scoring?: ScoringConfig;
  fallback_list?: string;
  fallback_providers?: FallbackProviderEntry[];
  /** `label_maps` entry of this chain's sessions (unset: `defaults.label_map`). */
  label_map?: string;
  builtin: boolean;
}

export interface LlmProviderConfig {
  name: string;
  type: LlmProviderType;
  model: string;
  /** Name of the environment variable that holds the key (never the key itself). */
  api_key_env?: string;
  base_url?: string;
  temperature?: number;
  max_tool_result_tokens: number;
  native_tools?: NativeToolsConfig;
  /** As configured; `effectiveReasoningEffort` adds the default of recent models. */
  reasoning_effort?: ReasoningEffort;
  /**
   * Vertex AI: environment variable holding a service-account JSON key, or the path to one
   * (unset: application default credentials).
   */
  credentials_env?: string;
  /** Vertex AI: environment variables holding the GCP project and location. */
  project_env?: string;
  location_env?: string;
  /** Per-provider overrides of the runner's first-chunk and stall timeouts. */
  initial_response_timeout_ms?: number;
  stall_timeout_ms?: number;
  builtin: boolean;
}

export interface AlertMaskingDefaults {
  enabled: boolean;
  pattern_group: string;
}

/** How memories are embedded: through llm-service's Embed RPC, with this provider. */
export interface EmbeddingConfig {
  provider: "google" | "openai" | "scripted";
  model: string;
  /** Name of the environment variable (of llm-service) that holds the key. */
  api_key_env: string;
  dimensions: number;
  base_url?: string;
}

/** Investigation memory, resolved: off unless `defaults.memory.enabled`. */
export interface MemoryConfig {
  enabled: boolean;
  /** How many memories go into an investigation's prompt (default 5). */
  max_inject: number;
  /** How many similar memories the reflector is shown to deduplicate against (default 20). */
  reflector_memory_limit: number;
  embedding: EmbeddingConfig;
}

export interface DefaultsConfig {
  llm_provider: string;
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
  max_iterations: number;
  /** Unset means stages fall back to `any`. */
  success_policy?: SuccessPolicy;
  alert_type: string;
  runbook: string;
  alert_masking: AlertMaskingDefaults;
  /** Per-iteration LLM call timeout (default 120 s). */
  iteration_timeout_ms: number;
  fallback_list?: string;
  fallback_providers?: FallbackProviderEntry[];
  /**
   * The compose stage's model (the amended report after an action stage): its provider beats
   * a chain's `llm_provider`; a chain's own `compose_*` beat these.
   */
  compose_provider?: string;
  compose_backend?: LlmBackend;
  /** A `fallback_lists` name: the compose call's fallback walk. */
  compose_fallback_list?: string;
  /** Executive summary model and list (chain settings win; the provider beats `chain.llm_provider`). */
  executive_summary_provider?: string;
  executive_summary_backend?: LlmBackend;
  executive_summary_fallback_list?: string;
  /** Written as the nested `executive_summary:` block (paths in messages follow the YAML). */
  executive_summary_nested?: boolean;
  /** `defaults.agents.<name>`: a named agent's global model and list (chain/stage/ref win). */
  agents?: Readonly<Record<string, AgentPairing>>;
  summarization?: DefaultSummarization;
  scoring?: ScoringConfig;
  memory: MemoryConfig;
  /** Guardrails of every orchestrating agent, under each agent definition's `orchestrator`. */
  orchestrator?: Partial<OrchestratorLimits>;
  /** Approval of action agents' mutating calls. */
  approval: ApprovalDefaults;
  /** The `label_maps` entry sessions are labelled with (unset: `builtin`). */
  label_map?: string;
}

export interface QueueConfig {
  worker_count: number;
  max_concurrent_sessions: number;
  /**
   * New alerts of a type are refused (not stored) while that type already has this many
   * pending sessions; 0 means no limit.
   */
  max_pending_per_alert_type: number;
  poll_interval_ms: number;
  poll_interval_jitter_ms: number;
  session_timeout_ms: number;
  chat_timeout_ms: number;
  /**
   * Time an iterating agent keeps for its forced conclusion: when no more than this (or its
   * iteration timeout, if shorter) is left before its deadline, it stops iterating and
   * concludes, with `reason: time_budget` (default 3 min).
   */
  wrap_up_reserve_ms: number;
  /**
   * An execution whose runner died continues its stored conversation on the next attempt
   * (only the step in flight runs again) instead of starting over (default true).
   */
  resume_interrupted: boolean;
  graceful_shutdown_timeout_ms: number;
  orphan_detection_interval_ms: number;
  orphan_threshold_ms: number;
  heartbeat_interval_ms: number;
}

export interface GithubConfig {
  /** Environment variable holding the GitHub token (default GITHUB_TOKEN). */
  token_env: string;
  /** GitHub REST API base (default https://api.github.com). */
  api_url: string;
}

export interface RunbooksConfig {
  /** Repository tree whose `.md` files the dashboard offers; empty means no listing. */
  repo_url: string;
  /** How long fetched runbooks and the listing are reused (default 1 minute). */
  cache_ttl_ms: number;
  /** Hosts runbooks may come from (each also as `www.` + host). */
  allowed_domains: string[];
  /** Private, loopback and shared address ranges may be fetched (default false). */
  allow_private_addresses: boolean;
}

/** Slack notifications (the Go TARSy's `system.slack`). */
export interface SlackConfig {
  enabled: boolean;
  /** Environment variable holding the bot token (default SLACK_BOT_TOKEN). */
  token_env: string;
  /** Channel id; required when enabled. */
  channel: string;
  /** Slack Web API base, ending in `/` (default https://slack.com/api/). */
  api_url: string;
  /** Alertmanager alerts: the label, then the annotation, holding the thread fingerprint. */
  fingerprint_label: string;
  fingerprint_annotation: string;
}

export interface WebhookConfig {
  url: string;
  /** The outcomes sent (default the four terminal ones). */
  events: NotificationEvent[];
  /** Environment variable holding the HMAC-SHA256 signing secret; unsigned when absent. */
  secret_env?: string;
}

export interface NotificationsConfig {
  webhooks: WebhookConfig[];
}

/** Data retention (the Go TARSy's `system.retention`). */
export interface RetentionConfig {
  /** Sessions that ended longer ago are soft-deleted (default 365). */
  session_retention_days: number;
  /** max_age of the JetStream event stream (default 7 days). */
  event_ttl_ms: number;
  /** How often the cleanup job runs (default 12h). */
  cleanup_interval_ms: number;
  /** Soft-deleted sessions older than this are erased with every dependent row (default 30 days). */
  hard_delete_after_ms: number;
}

/** USD per million tokens. */
export interface ModelRate {
  input_per_million: number;
  output_per_million: number;
}

/** A flat rate for one exact model name during the half-open UTC window [start, end). */
export interface Promotion extends ModelRate {
  id: string;
  model: string;
  /** Epoch ms; null: already active. */
  start_ms: number | null;
  end_ms: number;
}

/** LLM cost estimation (the Go TARSy's `system.cost_estimation`). */
export interface CostEstimationConfig {
  /** Default true. */
  enabled: boolean;
  /** Exact model name → rate; beats the bundled price table. */
  model_rates: Record<string, ModelRate>;
  /** Beat model_rates and the table while active. */
  promotions: Promotion[];
}

/** Provider prompt caching (the Go TARSy's `system.prompt_caching`, ADR-0026). */
export interface PromptCachingConfig {
  /** Default true. Off: no Anthropic cache_control nor OpenAI breakpoints (Gemini still caches). */
  enabled: boolean;
}

export interface SystemConfig {
  /** Origins a browser WebSocket may connect from; empty means same-origin only. */
  allowed_ws_origins: string[];
  dashboard_url?: string;
  github: GithubConfig;
  runbooks: RunbooksConfig;
  /** Year-agnostic UTC holidays for the prompts' calendar line; empty uses the built-in list. */
  holidays: Holiday[];
  slack: SlackConfig;
  notifications: NotificationsConfig;
  retention: RetentionConfig;
  cost_estimation: CostEstimationConfig;
  prompt_caching: PromptCachingConfig;
}

/** A holiday every year on `date` (`MM-DD`, UTC). */
export interface Holiday {
  date: string;
  name: string;
}

/** Which file defined each entry (`<built-in>` for built-ins), for messages and summaries. */
export interface ConfigSources {
  defaults: string;
  agents: ReadonlyMap<string, string>;
  chains: ReadonlyMap<string, string>;
  mcpServers: ReadonlyMap<string, string>;
  llmProviders: ReadonlyMap<string, string>;
}

export interface TarsyConfig {
  configDir: string;
  defaults: DefaultsConfig;
  queue: QueueConfig;
  system: SystemConfig;
  authorization: AuthorizationConfig;
  agents: ReadonlyMap<string, AgentConfig>;
  chains: ReadonlyMap<string, ChainConfig>;
  mcpServers: ReadonlyMap<string, McpServerConfig>;
  llmProviders: ReadonlyMap<string, LlmProviderConfig>;
  /** `<configDir>/skills/`, by name (empty without the directory). */
  skills: ReadonlyMap<string, SkillConfig>;
  /** The `label_maps` catalog, `builtin` always present (shipped, or replaced by YAML). */
  labelMaps: ReadonlyMap<string, LabelMapConfig>;
  /** The `fallback_lists` catalog: named fallback walks, each in order. */
  fallbackLists: ReadonlyMap<string, FallbackProviderEntry[]>;
  sources: ConfigSources;
}

export interface ConfigWarning {
  file: string;
  path: string;
  message: string;
  /** Set when the key is one the Go TARSy acts on and this implementation does not yet. */
  unsupported?: { key: string; does: string; issue: number };
}
