import {
  COMPOSE_AGENT,
  DEFAULT_CHAT_AGENT,
  DEFAULT_MAX_CONCURRENT_AGENTS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_SYNTHESIS_AGENT,
  EXEC_SUMMARY_AGENT,
  SCORING_AGENT,
} from "./builtins.ts";
import { ChatDisabledError, UnknownReferenceError } from "./errors.ts";
import {
  enabledNativeTools,
  expandFallbackLevel,
  type ResolvedFallbackEntry,
  resolveEntries,
  resolveFallbackProviders,
  resolveJobFallbackProviders,
} from "./fallback.ts";
import type {
  AgentConfig,
  AgentPairing,
  ChainConfig,
  IterationStrategy,
  LlmBackend,
  LlmProviderConfig,
  LlmProviderType,
  NativeToolsConfig,
  OrchestratorLimits,
  StageAgentConfig,
  StageConfig,
  SubAgentRef,
  TarsyConfig,
} from "./types.ts";

/** What an agent execution runs with, after the hierarchy has been applied. */
export interface ResolvedAgentConfig {
  /** The registry name (for replicas, the base name; the display name is separate). */
  agent_name: string;
  llm_provider_name: string;
  llm_provider: LlmProviderConfig;
  llm_backend: LlmBackend;
  max_iterations: number;
  iteration_timeout_ms: number;
  mcp_servers: string[];
  custom_instructions?: string;
  native_tools?: NativeToolsConfig;
  /** Providers to switch to, in order, when the current one keeps failing. */
  fallback_providers: ResolvedFallbackEntry[];
  /** The agent's definition enables Gemini native tools: only google-native can stand in. */
  requires_native_tools: boolean;
  /** Skills whose bodies go into the system prompt ("Pre-loaded Skills"). */
  required_skills: ResolvedSkill[];
  /** Skills the agent may load with `load_skill` (its catalog); never a required one. */
  on_demand_skills: ResolvedSkill[];
  /**
   * The agents it may dispatch (its sub-agent catalog). Empty: a plain agent, no
   * orchestration; always empty for synthesis, the executive summary, the judge and
   * sub-agents themselves (depth 1).
   */
  sub_agents: ResolvedSubAgent[];
  /** Its guardrails when it dispatches: `defaults.orchestrator`, then the definition's block. */
  orchestrator: OrchestratorLimits;
}

/** An entry of an agent's sub-agent catalog: what the orchestrating agent is told about it. */
export interface ResolvedSubAgent {
  name: string;
  description: string;
  /** The MCP servers it runs with: the reference's list, else its definition's. */
  mcp_servers: string[];
  /** Gemini native tools its definition switches on (for the catalog's display). */
  native_tools: string[];
  /** The reference as configured (its per-dispatch overrides). */
  ref: SubAgentRef;
}

/** Whose sub-agents: a stage agent's (investigation and action stages) or a chain's chat's. */
export type SubAgentParent =
  | { kind: "stage"; stageIndex: number; agentRef: StageAgentConfig }
  | { kind: "chat" };

export interface ResolvedSkill {
  name: string;
  description: string;
  body: string;
}

/**
 * An agent's guardrails as an orchestrator: built-in (5 at once, no timeout, no budget) ←
 * `defaults.orchestrator` ← the agent definition's `orchestrator:` block, key by key.
 */
export function resolveOrchestratorLimits(
  config: TarsyConfig,
  agent?: AgentConfig,
): OrchestratorLimits {
  return {
    max_concurrent_agents: DEFAULT_MAX_CONCURRENT_AGENTS,
    ...config.defaults.orchestrator,
    ...agent?.orchestrator,
  };
}

/** The first list (most specific first) that names at least one agent. */
function firstNonEmptyRefs(levels: readonly (SubAgentRef[] | undefined)[]): SubAgentRef[] {
  return levels.find((list) => list !== undefined && list.length > 0) ?? [];
}

/**
 * The `sub_agents` list in force for a parent, first non-empty wins: for a stage agent its
 * reference's list, the stage's, the chain's, then its definition's; for chat `chat.sub_agents`,
 * then the chain's.
 */
export function resolveSubAgentRefs(
  config: TarsyConfig,
  chain: ChainConfig,
  parent: SubAgentParent,
): SubAgentRef[] {
  if (parent.kind === "chat") return firstNonEmptyRefs([chain.chat.sub_agents, chain.sub_agents]);
  const stage = getStage(chain, parent.stageIndex);
  return firstNonEmptyRefs([
    parent.agentRef.sub_agents,
    stage.sub_agents,
    chain.sub_agents,
    config.agents.get(parent.agentRef.name)?.sub_agents,
  ]);
}

/**
 * The catalog of a `sub_agents` list: the references whose agent exists and has a
 * `description` (what the orchestrating agent chooses by), in the list's order, each name once.
 * Unknown and undescribed agents are left out (config loading reports them).
 */
export function subAgentCatalog(
  config: TarsyConfig,
  refs: readonly SubAgentRef[],
): ResolvedSubAgent[] {
  const seen = new Set<string>();
  const catalog: ResolvedSubAgent[] = [];
  for (const ref of refs) {
    const agent = config.agents.get(ref.name);
    if (!agent?.description || seen.has(ref.name)) continue;
    seen.add(ref.name);
    catalog.push({
      name: ref.name,
      description: agent.description,
      mcp_servers: nonEmpty(ref.mcp_servers) ?? [...agent.mcp_servers],
      native_tools: enabledNativeTools(agent.native_tools).sort(),
      ref,
    });
  }
  return catalog;
}

/** No sub-agents: what synthesis, the executive summary and the judge run with. */
export function noSubAgents(
  config: TarsyConfig,
  agent?: AgentConfig,
): Pick<ResolvedAgentConfig, "sub_agents" | "orchestrator"> {
  return { sub_agents: [], orchestrator: resolveOrchestratorLimits(config, agent) };
}

/** No skills: what synthesis, the executive summary and the judge run with. */
export function noSkills(): Pick<ResolvedAgentConfig, "required_skills" | "on_demand_skills"> {
  return { required_skills: [], on_demand_skills: [] };
}

/** Where an agent's skills are set: the stage's agent reference wins over the definition. */
interface SkillLevel {
  skills?: string[];
  required_skills?: string[];
}

/**
 * The agent's skills: the allowlist (`skills` unset: every skill; `[]`: none) split into the
 * required ones (their bodies in the prompt) and the rest (the on-demand catalog). Names the
 * registry does not have are left out (config loading reports them).
 */
export function resolveSkills(
  config: TarsyConfig,
  levelsHighestFirst: (SkillLevel | undefined)[],
): Pick<ResolvedAgentConfig, "required_skills" | "on_demand_skills"> {
  const pick = <K extends keyof SkillLevel>(key: K) =>
    levelsHighestFirst.find((level) => level?.[key] !== undefined)?.[key];
  const allow = pick("skills");
  const required = new Set(pick("required_skills") ?? []);
  const allowed = allow === undefined ? [...config.skills.keys()] : allow;
  const toResolved = (name: string): ResolvedSkill[] => {
    const skill = config.skills.get(name);
    return skill ? [{ name, description: skill.description, body: skill.body }] : [];
  };
  return {
    required_skills: [...required].flatMap(toResolved),
    on_demand_skills: allowed.filter((name) => !required.has(name)).flatMap(toResolved),
  };
}

/** A level of the hierarchy that may set the backend, either directly or through a strategy. */
interface BackendLevel {
  llm_backend?: LlmBackend;
  iteration_strategy?: IterationStrategy;
}

/** TARSy's iteration strategies map to backends: native thinking needs the Google SDK. */
export function backendForStrategy(strategy: IterationStrategy): LlmBackend {
  return strategy === "native-thinking" || strategy === "synthesis-native-thinking"
    ? "google-native"
    : "langchain";
}

/** The backend when no level sets one: Gemini natively, scripted for scripted, else LangChain. */
export function defaultBackendFor(providerType: LlmProviderType): LlmBackend {
  if (providerType === "google") return "google-native";
  if (providerType === "scripted") return "scripted";
  return "langchain";
}

/** Vertex AI serves Claude models through Anthropic's publisher (TARSy's rule: the model name). */
export function isVertexClaudeModel(model: string): boolean {
  const name = model.toLowerCase();
  return name.includes("claude") || name.includes("anthropic");
}

/**
 * Whether llm-service can run this backend against this provider type (and model: the
 * google-native backend speaks Gemini only, so not Claude on Vertex AI).
 */
export function isBackendCompatible(
  backend: LlmBackend,
  providerType: LlmProviderType,
  model = "",
): boolean {
  if (providerType === "scripted") return backend === "scripted";
  if (backend === "scripted") return false;
  if (backend === "google-native") {
    if (providerType === "vertexai") return !isVertexClaudeModel(model);
    return providerType === "google";
  }
  return true;
}

function backendOf(level: BackendLevel | undefined): LlmBackend | undefined {
  if (!level) return undefined;
  if (level.llm_backend) return level.llm_backend;
  return level.iteration_strategy ? backendForStrategy(level.iteration_strategy) : undefined;
}

/** The first level (highest priority first) that sets a backend, else the provider's default. */
function pickBackend(
  levelsHighestFirst: (BackendLevel | undefined)[],
  provider: LlmProviderConfig,
): LlmBackend {
  for (const level of levelsHighestFirst) {
    const backend = backendOf(level);
    if (backend) return backend;
  }
  return defaultBackendFor(provider.type);
}

function nonEmpty(list: readonly string[] | undefined): string[] | undefined {
  return list && list.length > 0 ? [...list] : undefined;
}

function mergeNativeTools(
  provider: LlmProviderConfig,
  agent: AgentConfig,
): NativeToolsConfig | undefined {
  if (!provider.native_tools && !agent.native_tools) return undefined;
  return { ...provider.native_tools, ...agent.native_tools };
}

export function getAgent(config: TarsyConfig, name: string, context: string): AgentConfig {
  const agent = config.agents.get(name);
  if (!agent) throw new UnknownReferenceError("agent", [name], context);
  return agent;
}

export function getLlmProvider(
  config: TarsyConfig,
  name: string,
  context: string,
): LlmProviderConfig {
  const provider = config.llmProviders.get(name);
  if (!provider) throw new UnknownReferenceError("llm_provider", [name], context);
  return provider;
}

/** `defaults.agents.<name>`: the named agent's global model and list, if any. */
export function agentPairing(config: TarsyConfig, name: string): AgentPairing | undefined {
  return config.defaults.agents?.[name];
}

/**
 * The backend level of a `defaults.agents` pairing: its `llm_backend`, or, when it names the
 * provider the execution runs on and no backend, that provider's default (a pairing is a pair:
 * a chain's backend never lands on a provider chosen here).
 */
function pairingBackend(
  pairing: AgentPairing | undefined,
  providerName: string,
  provider: LlmProviderConfig,
): BackendLevel | undefined {
  if (!pairing) return undefined;
  if (pairing.llm_backend) return { llm_backend: pairing.llm_backend };
  if (pairing.llm_provider === providerName)
    return { llm_backend: defaultBackendFor(provider.type) };
  return undefined;
}

export function getStage(chain: ChainConfig, stageIndex: number): StageConfig {
  const stage = chain.stages[stageIndex];
  if (!stage) throw new UnknownReferenceError("stage", [String(stageIndex)], `chain "${chain.id}"`);
  return stage;
}

/**
 * Resolves one stage agent: defaults → agent definition → chain → stage → stage-agent.
 * - provider: stage-agent → chain → defaults
 * - backend: stage-agent → chain → agent → defaults (llm_backend, or iteration_strategy), else
 *   the provider type's default
 * - max_iterations: stage-agent → stage → chain → agent → defaults → 40
 * - mcp_servers: stage-agent → chain → agent (a non-empty list replaces, never merges)
 * - iteration timeout: stage → defaults (120 s)
 */
export function resolveAgentConfig(
  config: TarsyConfig,
  chain: ChainConfig,
  stageIndex: number,
  agentRef: StageAgentConfig,
): ResolvedAgentConfig {
  const stage = getStage(chain, stageIndex);
  const context = `chain "${chain.id}" stage "${stage.name}"`;
  const agent = getAgent(config, agentRef.name, context);
  const pairing = agentPairing(config, agentRef.name);
  const providerName =
    agentRef.llm_provider ??
    pairing?.llm_provider ??
    chain.llm_provider ??
    config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  const paired = agentRef.llm_provider
    ? undefined
    : pairingBackend(pairing, providerName, provider);
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: pickBackend([agentRef, paired, chain, agent, config.defaults], provider),
    max_iterations:
      agentRef.max_iterations ??
      stage.max_iterations ??
      chain.max_iterations ??
      agent.max_iterations ??
      config.defaults.max_iterations ??
      DEFAULT_MAX_ITERATIONS,
    iteration_timeout_ms: stage.iteration_timeout_ms ?? config.defaults.iteration_timeout_ms,
    mcp_servers: nonEmpty(agentRef.mcp_servers) ??
      nonEmpty(chain.mcp_servers) ?? [...agent.mcp_servers],
    fallback_providers: resolveFallbackProviders(
      config,
      [agentRef, stage, pairing, chain, config.defaults],
      context,
      agent.native_tools,
    ),
    requires_native_tools: enabledNativeTools(agent.native_tools).length > 0,
    ...resolveSkills(config, [agentRef, agent]),
    sub_agents: subAgentCatalog(
      config,
      resolveSubAgentRefs(config, chain, { kind: "stage", stageIndex, agentRef }),
    ),
    orchestrator: resolveOrchestratorLimits(config, agent),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
    ...optionalNativeTools(mergeNativeTools(provider, agent)),
  };
}

function optionalNativeTools(tools: NativeToolsConfig | undefined): {
  native_tools?: NativeToolsConfig;
} {
  return tools ? { native_tools: tools } : {};
}

/**
 * Resolves the synthesis agent of a stage (run after a stage with more than one execution):
 * agent `synthesis.agent` or SynthesisAgent; provider synthesis → chain → defaults; backend
 * synthesis → chain → agent → defaults. Synthesis gets the agent definition's tools only.
 */
export function resolveSynthesisConfig(
  config: TarsyConfig,
  chain: ChainConfig,
  stageIndex: number,
): ResolvedAgentConfig {
  const stage = getStage(chain, stageIndex);
  const synthesis = stage.synthesis ?? {};
  const context = `chain "${chain.id}" stage "${stage.name}" synthesis`;
  const agent = getAgent(config, synthesis.agent ?? DEFAULT_SYNTHESIS_AGENT, context);
  const pairing = agentPairing(config, agent.name);
  const providerName =
    synthesis.llm_provider ??
    pairing?.llm_provider ??
    chain.llm_provider ??
    config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  const paired = synthesis.llm_provider
    ? undefined
    : pairingBackend(pairing, providerName, provider);
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: pickBackend([synthesis, paired, chain, agent, config.defaults], provider),
    max_iterations:
      stage.max_iterations ??
      chain.max_iterations ??
      agent.max_iterations ??
      config.defaults.max_iterations,
    iteration_timeout_ms: stage.iteration_timeout_ms ?? config.defaults.iteration_timeout_ms,
    mcp_servers: [...agent.mcp_servers],
    fallback_providers: resolveFallbackProviders(
      config,
      [synthesis, pairing, stage, chain, config.defaults],
      context,
      agent.native_tools,
    ),
    requires_native_tools: enabledNativeTools(agent.native_tools).length > 0,
    ...noSkills(),
    ...noSubAgents(config, agent),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
    ...optionalNativeTools(mergeNativeTools(provider, agent)),
  };
}

/** Every MCP server the chain's stages use (chain-level list first), without duplicates. */
export function aggregateChainMcpServers(config: TarsyConfig, chain: ChainConfig): string[] {
  const servers = new Set<string>(chain.mcp_servers ?? []);
  for (const stage of chain.stages) {
    for (const agentRef of stage.agents) {
      const agent = config.agents.get(agentRef.name);
      if (!agent) continue;
      const list =
        nonEmpty(agentRef.mcp_servers) ?? nonEmpty(chain.mcp_servers) ?? agent.mcp_servers;
      for (const id of list) servers.add(id);
    }
  }
  return [...servers];
}

/**
 * Resolves the chat agent of a chain (follow-up questions after an investigation):
 * agent `chat.agent` or ChatAgent; provider chat → chain → defaults; backend and
 * max_iterations chat → chain → agent → defaults; MCP servers `chat.mcp_servers`, else the
 * union of the chain's stage servers, else the agent's own. A per-alert `mcp_selection`
 * still replaces the result (apply `resolveMcpSelection`).
 */
export function resolveChatAgentConfig(
  config: TarsyConfig,
  chain: ChainConfig,
): ResolvedAgentConfig {
  const chat = chain.chat;
  if (!chat.enabled) throw new ChatDisabledError(chain.id);
  const context = `chain "${chain.id}" chat`;
  const agent = getAgent(config, chat.agent ?? DEFAULT_CHAT_AGENT, context);
  const pairing = agentPairing(config, agent.name);
  const providerName =
    chat.llm_provider ??
    pairing?.llm_provider ??
    chain.llm_provider ??
    config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  const paired = chat.llm_provider ? undefined : pairingBackend(pairing, providerName, provider);
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: pickBackend([chat, paired, chain, agent, config.defaults], provider),
    max_iterations:
      chat.max_iterations ??
      chain.max_iterations ??
      agent.max_iterations ??
      config.defaults.max_iterations,
    iteration_timeout_ms: config.defaults.iteration_timeout_ms,
    mcp_servers: nonEmpty(chat.mcp_servers) ??
      nonEmpty(aggregateChainMcpServers(config, chain)) ?? [...agent.mcp_servers],
    fallback_providers: resolveFallbackProviders(
      config,
      [chat, pairing, chain, config.defaults],
      context,
      agent.native_tools,
    ),
    requires_native_tools: enabledNativeTools(agent.native_tools).length > 0,
    ...resolveSkills(config, [agent]),
    sub_agents: subAgentCatalog(config, resolveSubAgentRefs(config, chain, { kind: "chat" })),
    orchestrator: resolveOrchestratorLimits(config, agent),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
    ...optionalNativeTools(mergeNativeTools(provider, agent)),
  };
}

export interface ResolvedExecutiveSummaryConfig {
  agent_name: string;
  llm_provider_name: string;
  llm_provider: LlmProviderConfig;
  llm_backend: LlmBackend;
  custom_instructions?: string;
  fallback_providers: ResolvedFallbackEntry[];
}

/**
 * The executive summary LLM call: provider `executive_summary_provider` → chain
 * `llm_provider` → defaults; backend chain → ExecSummaryAgent → defaults. When that backend
 * cannot drive the chosen provider (e.g. google-native with an OpenAI summary provider), the
 * provider's own default backend is used.
 */
export function resolveExecutiveSummaryConfig(
  config: TarsyConfig,
  chain: ChainConfig,
): ResolvedExecutiveSummaryConfig {
  const context = `chain "${chain.id}" executive summary`;
  const agent = getAgent(config, EXEC_SUMMARY_AGENT, context);
  const { defaults } = config;
  const providerName =
    chain.executive_summary_provider ??
    defaults.executive_summary_provider ??
    chain.llm_provider ??
    defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  const jobBackend = chain.executive_summary_backend ?? defaults.executive_summary_backend;
  const namedHere = chain.executive_summary_provider ?? defaults.executive_summary_provider;
  let backend = jobBackend
    ? jobBackend
    : namedHere
      ? defaultBackendFor(provider.type)
      : pickBackend([chain, agent, defaults], provider);
  if (!isBackendCompatible(backend, provider.type, provider.model)) {
    backend = defaultBackendFor(provider.type);
  }
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: backend,
    fallback_providers: resolveJobFallbackProviders(
      config,
      chain,
      [
        { fallback_list: chain.executive_summary_fallback_list },
        { fallback_list: defaults.executive_summary_fallback_list },
      ],
      context,
    ),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
  };
}

export interface ResolvedComposeConfig extends ResolvedExecutiveSummaryConfig {
  /** The `fallback_lists` name the compose call should walk (`compose_fallback_list`), if set. */
  fallback_list?: string;
}

/**
 * The compose stage's LLM call (the amended report after an action stage, ADR-0025). Unlike
 * the executive summary, the compose knobs beat the chain's `llm_provider` (a cheaper model
 * for a copy-edit): provider chain `compose_provider` → `defaults.compose_provider` → chain
 * `llm_provider` → `defaults.llm_provider`; backend chain `compose_backend` →
 * `defaults.compose_backend`, else as for the executive summary (chain → defaults, and the
 * provider's own default when that one cannot drive it); fallback list chain
 * `compose_fallback_list` → `defaults.compose_fallback_list`.
 */
export function resolveComposeConfig(
  config: TarsyConfig,
  chain: ChainConfig,
): ResolvedComposeConfig {
  const context = `chain "${chain.id}" compose`;
  const agent = config.agents.get(COMPOSE_AGENT);
  const fallbackList = chain.compose_fallback_list ?? config.defaults.compose_fallback_list;
  return {
    agent_name: COMPOSE_AGENT,
    ...resolveComposeModel(config, chain),
    fallback_providers: resolveJobFallbackProviders(
      config,
      chain,
      [
        { fallback_list: chain.compose_fallback_list },
        { fallback_list: config.defaults.compose_fallback_list },
      ],
      context,
    ),
    ...(fallbackList !== undefined && { fallback_list: fallbackList }),
    ...(agent?.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
  };
}

/** The compose call's provider and backend (see `resolveComposeConfig`), without its walk. */
export function resolveComposeModel(
  config: TarsyConfig,
  chain: ChainConfig,
): Pick<ResolvedAgentConfig, "llm_provider" | "llm_provider_name" | "llm_backend"> {
  const providerName =
    chain.compose_provider ??
    config.defaults.compose_provider ??
    chain.llm_provider ??
    config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, `chain "${chain.id}" compose`);
  const explicit = chain.compose_backend ?? config.defaults.compose_backend;
  let backend = explicit ?? pickBackend([chain, config.defaults], provider);
  if (explicit === undefined && !isBackendCompatible(backend, provider.type, provider.model)) {
    backend = defaultBackendFor(provider.type);
  }
  return { llm_provider_name: providerName, llm_provider: provider, llm_backend: backend };
}

/** Whether a chain's completed sessions are scored automatically: chain → defaults → off. */
export function isScoringEnabled(config: TarsyConfig, chain: ChainConfig): boolean {
  return chain.scoring?.enabled ?? config.defaults.scoring?.enabled ?? false;
}

/**
 * The scoring judge (the Go TARSy's ResolveScoringConfig): agent chain `scoring.agent` →
 * `defaults.scoring.agent` → ScoringAgent; provider chain scoring → defaults scoring → chain →
 * defaults; backend chain scoring → defaults scoring → chain → agent → defaults; MCP servers
 * (whose tools the judge is told the investigation had) chain scoring → chain → the chain's
 * stage servers. The judge itself calls no tools.
 */
export function resolveScoringConfig(config: TarsyConfig, chain: ChainConfig): ResolvedAgentConfig {
  const scoring = chain.scoring ?? {};
  const base = config.defaults.scoring ?? {};
  const context = `chain "${chain.id}" scoring`;
  const agent = getAgent(config, scoring.agent ?? base.agent ?? SCORING_AGENT, context);
  const providerName =
    scoring.llm_provider ?? base.llm_provider ?? chain.llm_provider ?? config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  let backend = pickBackend([scoring, base, chain, agent, config.defaults], provider);
  if (!isBackendCompatible(backend, provider.type, provider.model)) {
    backend = defaultBackendFor(provider.type);
  }
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: backend,
    max_iterations:
      scoring.max_iterations ??
      base.max_iterations ??
      chain.max_iterations ??
      agent.max_iterations ??
      config.defaults.max_iterations,
    iteration_timeout_ms: config.defaults.iteration_timeout_ms,
    mcp_servers: nonEmpty(scoring.mcp_servers) ??
      nonEmpty(base.mcp_servers) ??
      nonEmpty(chain.mcp_servers) ?? [...aggregateChainMcpServers(config, chain)],
    fallback_providers: resolveJobFallbackProviders(config, chain, [scoring, base], context),
    requires_native_tools: false,
    ...noSkills(),
    ...noSubAgents(config, agent),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
  };
}

/** Names once each, first occurrence first. */
function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

/**
 * A sub-agent's own configuration, for a dispatch by `parent` (a stage agent, or the chain's
 * chat agent). The reference is looked up in the parent's catalog by name; the hierarchy is
 * defaults → agent definition → chain → the reference's overrides:
 * - provider: reference → chain → defaults
 * - backend: reference → agent → chain → defaults, else the provider type's default
 * - max_iterations: reference → agent → defaults → 40
 * - mcp_servers: reference → agent (a non-empty list replaces)
 * - skills and required skills: the definition's plus the reference's (deduplicated)
 * - provider and fallback list: reference → `defaults.agents.<name>` → chain → defaults (never
 *   the parent's: its stage, stage agent or chat settings do not reach its sub-agents)
 * A sub-agent dispatches nothing itself (`sub_agents` is always empty: depth 1).
 */
export function resolveSubAgentConfig(
  config: TarsyConfig,
  chain: ChainConfig,
  parent: SubAgentParent,
  name: string,
): ResolvedAgentConfig {
  let context: string;
  if (parent.kind === "chat") {
    if (!chain.chat.enabled) throw new ChatDisabledError(chain.id);
    context = `chain "${chain.id}" chat`;
  } else {
    const stage = getStage(chain, parent.stageIndex);
    context = `chain "${chain.id}" stage "${stage.name}" agent "${parent.agentRef.name}"`;
  }
  const entry = subAgentCatalog(config, resolveSubAgentRefs(config, chain, parent)).find(
    (candidate) => candidate.name === name,
  );
  if (!entry) throw new UnknownReferenceError("agent", [name], `${context} sub-agents`);
  const { ref } = entry;
  context = `${context} sub-agent "${name}"`;
  const agent = getAgent(config, name, context);
  const pairing = agentPairing(config, name);
  const providerName =
    ref.llm_provider ?? pairing?.llm_provider ?? chain.llm_provider ?? config.defaults.llm_provider;
  const provider = getLlmProvider(config, providerName, context);
  const paired = ref.llm_provider ? undefined : pairingBackend(pairing, providerName, provider);
  const skills: SkillLevel = {
    ...(agent.skills !== undefined && {
      skills: unique([...agent.skills, ...(ref.skills ?? [])]),
    }),
    required_skills: unique([...(agent.required_skills ?? []), ...(ref.required_skills ?? [])]),
  };
  return {
    agent_name: agent.name,
    llm_provider_name: providerName,
    llm_provider: provider,
    llm_backend: pickBackend([ref, paired, agent, chain, config.defaults], provider),
    max_iterations:
      ref.max_iterations ??
      agent.max_iterations ??
      config.defaults.max_iterations ??
      DEFAULT_MAX_ITERATIONS,
    iteration_timeout_ms: config.defaults.iteration_timeout_ms,
    mcp_servers: entry.mcp_servers,
    fallback_providers: resolveFallbackProviders(
      config,
      [ref, pairing, chain, config.defaults],
      context,
      agent.native_tools,
    ),
    requires_native_tools: enabledNativeTools(agent.native_tools).length > 0,
    ...resolveSkills(config, [skills]),
    ...noSubAgents(config, agent),
    ...(agent.custom_instructions !== undefined && {
      custom_instructions: agent.custom_instructions,
    }),
    ...optionalNativeTools(mergeNativeTools(provider, agent)),
  };
}

/** The model that summarizes large tool results, when one is configured (else the agent's). */
export interface ResolvedSummarizationModel {
  llm_provider_name: string;
  llm_provider: LlmProviderConfig;
  llm_backend: LlmBackend;
}

/**
 * The summarization model of a server's results (ADR-0024): the server's
 * `summarization.llm_provider`, else `defaults.summarization.llm_provider`, else undefined (the
 * calling agent's own model). A layer that names a provider without a backend gets that
 * provider's default backend, never another layer's. `serverId` undefined: defaults only.
 */
export function resolveSummarizationModel(
  config: TarsyConfig,
  serverId: string | undefined,
): ResolvedSummarizationModel | undefined {
  const server =
    serverId === undefined ? undefined : config.mcpServers.get(serverId)?.summarization;
  const layer = server?.llm_provider ? server : config.defaults.summarization;
  if (!layer?.llm_provider) return undefined;
  const context = serverId ? `mcp_servers "${serverId}" summarization` : "defaults summarization";
  const provider = getLlmProvider(config, layer.llm_provider, context);
  return {
    llm_provider_name: layer.llm_provider,
    llm_provider: provider,
    llm_backend: layer.llm_backend ?? defaultBackendFor(provider.type),
  };
}

/**
 * The walk of summarization calls: `defaults.summarization.fallback_list` when set, else
 * undefined (the calling agent's own list). Never applies native-tool rules.
 */
export function resolveSummarizationFallbacks(
  config: TarsyConfig,
): ResolvedFallbackEntry[] | undefined {
  const list = expandFallbackLevel(config, config.defaults.summarization, "defaults summarization");
  return list === undefined ? undefined : resolveEntries(config, list, "defaults summarization");
}
