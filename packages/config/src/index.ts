export { agentTypeWarnings, resolveAgentType, stageKindFor } from "./agent-type.ts";
export {
  AUTHZ_ACTIONS,
  AUTHZ_RESOURCE,
  type AuthorizationConfig,
  type AuthzAction,
  builtinAuthorization,
  DEFAULT_PROJECT,
  isProjectName,
  type PolicyRule,
  parsePolicy,
} from "./authorization.ts";
export {
  BUILTIN_FILE,
  builtinAgents,
  builtinChains,
  builtinLlmProviders,
  builtinMcpServers,
  DEFAULT_ALERT_TYPE,
  DEFAULT_CHAT_AGENT,
  DEFAULT_HOLIDAYS,
  DEFAULT_ITERATION_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_AGENTS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_SYNTHESIS_AGENT,
  EXEC_SUMMARY_AGENT,
  GENERAL_WORKER_AGENT,
  SCORING_AGENT,
} from "./builtins.ts";
export {
  findChainForAlertType,
  getChain,
  listAlertTypes,
  resolveChainForAlertType,
} from "./chains.ts";
export { formatDuration, parseDuration } from "./duration.ts";
export {
  ChainNotFoundError,
  ChatDisabledError,
  ConfigError,
  type ConfigIssue,
  formatIssue,
  type ReferenceKind,
  TarsyConfigError,
  UnknownReferenceError,
} from "./errors.ts";
export {
  enabledNativeTools,
  type ResolvedFallbackEntry,
  resolveFallbackProviders,
  servesNativeTools,
} from "./fallback.ts";
export { fillSessionId, interpolateString, SESSION_ID_PLACEHOLDER } from "./interpolate.ts";
export {
  builtinLabelMap,
  type LabelMapConfig,
  type LabelSpec,
  resolveLabelMap,
} from "./labels.ts";
export {
  DEFAULT_CONFIG_DIR,
  type LoadConfigOptions,
  type LoadConfigResult,
  loadConfig,
  PROVIDERS_FILE,
  TARSY_FILE,
} from "./load.ts";
export { MCP_AUTH_MODES, type McpAuthConfig, type McpAuthMode } from "./mcp-auth.ts";
export {
  fallbackCredentialIssues,
  fallbackLlmProviders,
  isCredentialIssue,
} from "./provider-env.ts";
export { effectiveReasoningEffort, takesDefaultReasoningEffort } from "./reasoning-effort.ts";
export {
  aggregateChainMcpServers,
  backendForStrategy,
  defaultBackendFor,
  getAgent,
  getLlmProvider,
  getStage,
  isBackendCompatible,
  isScoringEnabled,
  noSkills,
  noSubAgents,
  type ResolvedAgentConfig,
  type ResolvedExecutiveSummaryConfig,
  type ResolvedSkill,
  type ResolvedSubAgent,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveOrchestratorLimits,
  resolveScoringConfig,
  resolveSkills,
  resolveSubAgentConfig,
  resolveSubAgentRefs,
  resolveSynthesisConfig,
  type SubAgentParent,
  subAgentCatalog,
} from "./resolve.ts";
export {
  type ResolvedMcpSelection,
  resolveMcpSelection,
  unknownSelectionServers,
} from "./selection.ts";
export { loadSkills, parseSkillFile, SKILL_FILE, SKILLS_DIR, type SkillConfig } from "./skills.ts";
export {
  planStage,
  resolveSuccessPolicy,
  type StageExecutionConfig,
  type StagePlan,
} from "./stages.ts";
export {
  AGENT_TYPES,
  type AgentConfig,
  type AgentType,
  type AgentTypeSetting,
  type AlertMaskingDefaults,
  type ChainConfig,
  type ChatConfig,
  type ConfigSources,
  type ConfigWarning,
  type CustomMaskingPattern,
  type DefaultsConfig,
  type EmbeddingConfig,
  type FallbackProviderEntry,
  type GithubConfig,
  type Holiday,
  type HttpTransport,
  ITERATION_STRATEGIES,
  type IterationStrategy,
  LLM_BACKENDS,
  LLM_PROVIDER_TYPES,
  type LlmBackend,
  type LlmProviderConfig,
  type LlmProviderType,
  type McpDataMasking,
  type McpServerConfig,
  type McpSummarization,
  type MemoryConfig,
  type NativeToolsConfig,
  type OrchestratorLimits,
  type PromptCachingConfig,
  type QueueConfig,
  REASONING_EFFORTS,
  type ReasoningEffort,
  type RetentionConfig,
  type RunbooksConfig,
  type StageAgentConfig,
  type StageConfig,
  type StdioTransport,
  SUCCESS_POLICIES,
  type SubAgentRef,
  type SuccessPolicy,
  type SynthesisConfig,
  type SystemConfig,
  type TarsyConfig,
  TRANSPORT_TYPES,
  type TransportType,
} from "./types.ts";
export { UNSUPPORTED_KEYS, type UnsupportedKey, unsupportedKeyAt } from "./unsupported.ts";
export { configView } from "./view.ts";
