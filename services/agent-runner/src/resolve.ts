import {
  type ChainConfig,
  effectiveReasoningEffort,
  type LlmProviderConfig,
  type NativeToolsConfig,
  noSkills,
  noSubAgents,
  type ResolvedAgentConfig,
  resolveAgentConfig,
  resolveAgentType,
  resolveChatAgentConfig,
  resolveComposeConfig,
  resolveExecutiveSummaryConfig,
  resolveLabelMap,
  resolveMcpSelection,
  resolveScoringConfig,
  resolveSubAgentConfig,
  resolveSummarizationFallbacks,
  resolveSummarizationModel,
  resolveSynthesisConfig,
  type TarsyConfig,
} from "@tarsy/config";
import { type ExecutionRequested, McpSelectionSchema } from "@tarsy/contracts";
import type { LlmConfig } from "@tarsy/llm-client";
import { ExecutionConfigError } from "./errors.ts";
import type {
  ExecutionContext,
  ProviderStreamLimits,
  SummarizationSettings,
} from "./execution-context.ts";
import type { ExecutionRecord, SessionRunbookRecord } from "./ports.ts";

export const SYNTHESIS_STAGE_SUFFIX = " - Synthesis";

/** The llm-service request config of a provider (only env var names, never keys). */
export function llmConfigFor(
  provider: LlmProviderConfig,
  backend: LlmConfig["backend"],
  nativeTools?: NativeToolsConfig,
): LlmConfig {
  const effort = effectiveReasoningEffort(provider);
  return {
    provider: provider.type,
    model: provider.model,
    ...(provider.api_key_env !== undefined && { apiKeyEnv: provider.api_key_env }),
    ...(provider.base_url !== undefined && { baseUrl: provider.base_url }),
    ...(provider.credentials_env !== undefined && { credentialsEnv: provider.credentials_env }),
    ...(provider.project_env !== undefined && { projectEnv: provider.project_env }),
    ...(provider.location_env !== undefined && { locationEnv: provider.location_env }),
    backend,
    ...(provider.temperature !== undefined && { temperature: provider.temperature }),
    ...(effort !== undefined && { reasoningEffort: effort }),
    ...(nativeTools && {
      nativeTools: {
        ...(nativeTools.google_search !== undefined && { googleSearch: nativeTools.google_search }),
        ...(nativeTools.code_execution !== undefined && {
          codeExecution: nativeTools.code_execution,
        }),
        ...(nativeTools.url_context !== undefined && { urlContext: nativeTools.url_context }),
      },
    }),
  };
}

function streamLimitsOf(provider: LlmProviderConfig): ProviderStreamLimits {
  return {
    ...(provider.initial_response_timeout_ms !== undefined && {
      firstChunkTimeoutMs: provider.initial_response_timeout_ms,
    }),
    ...(provider.stall_timeout_ms !== undefined && { stallTimeoutMs: provider.stall_timeout_ms }),
  };
}

function stageIndexOf(chain: ChainConfig, stageName: string): number {
  const name = stageName.endsWith(SYNTHESIS_STAGE_SUFFIX)
    ? stageName.slice(0, -SYNTHESIS_STAGE_SUFFIX.length)
    : stageName;
  const index = chain.stages.findIndex((s) => s.name === name);
  if (index < 0) {
    throw new ExecutionConfigError(`chain "${chain.id}" has no stage named "${name}"`);
  }
  return index;
}

/** The stage's configured agent at a (1-based) agent index, with its stage index. */
function stageAgentRef(chain: ChainConfig, record: ExecutionRecord, agentIndex: number) {
  if (!record.stage) throw new ExecutionConfigError(`execution ${record.id} has no stage`);
  const index = stageIndexOf(chain, record.stage.name);
  const stage = chain.stages[index];
  const agentRef = stage && stage.replicas > 1 ? stage.agents[0] : stage?.agents[agentIndex - 1];
  if (!agentRef) {
    throw new ExecutionConfigError(
      `stage "${record.stage.name}" has no agent #${agentIndex} (${record.agentName})`,
    );
  }
  return { stageIndex: index, agentRef };
}

function resolveInvestigation(
  config: TarsyConfig,
  chain: ChainConfig,
  record: ExecutionRecord,
): ResolvedAgentConfig {
  const { stageIndex, agentRef } = stageAgentRef(chain, record, record.agentIndex);
  return resolveAgentConfig(config, chain, stageIndex, agentRef);
}

/** A sub-agent: its reference in its parent's catalog, over its own definition. */
function resolveSubAgent(
  config: TarsyConfig,
  chain: ChainConfig,
  record: ExecutionRecord,
  parent: NonNullable<ExecutionRecord["parent"]>,
): ResolvedAgentConfig {
  if (parent.kind === "chat") {
    return resolveSubAgentConfig(config, chain, { kind: "chat" }, record.agentName);
  }
  const { stageIndex, agentRef } = stageAgentRef(chain, record, parent.agentIndex);
  return resolveSubAgentConfig(
    config,
    chain,
    { kind: "stage", stageIndex, agentRef },
    record.agentName,
  );
}

function resolveFor(
  config: TarsyConfig,
  chain: ChainConfig,
  record: ExecutionRecord,
  request: ExecutionRequested,
): ResolvedAgentConfig {
  if (record.parent) return resolveSubAgent(config, chain, record, record.parent);
  switch (request.kind) {
    case "investigation":
    case "action":
      return resolveInvestigation(config, chain, record);
    case "synthesis":
      if (!record.stage) throw new ExecutionConfigError(`synthesis ${record.id} has no stage`);
      return resolveSynthesisConfig(config, chain, stageIndexOf(chain, record.stage.name));
    case "chat":
      return resolveChatAgentConfig(config, chain);
    case "executive_summary": {
      const summary = resolveExecutiveSummaryConfig(config, chain);
      return {
        ...summary,
        requires_native_tools: false,
        ...noSkills(),
        ...noSubAgents(config),
        max_iterations: 1,
        iteration_timeout_ms: config.defaults.iteration_timeout_ms,
        mcp_servers: [],
      };
    }
    case "scoring":
    case "feedback_reflection":
      return resolveScoringConfig(config, chain);
    case "compose": {
      // One tool-less call: no MCP servers, skills, sub-agents, nor Gemini native tools.
      const { fallback_list: _list, ...compose } = resolveComposeConfig(config, chain);
      return {
        ...compose,
        requires_native_tools: false,
        ...noSkills(),
        ...noSubAgents(config),
        max_iterations: 1,
        iteration_timeout_ms: config.defaults.iteration_timeout_ms,
        mcp_servers: [],
        native_tools: { google_search: false, code_execution: false, url_context: false },
      };
    }
  }
}

/**
 * Whether the execution may use mutating tools: only `type: action` agents may. A stage agent
 * by its resolved type (an action stage's agents, or an action agent in a mixed stage), a
 * sub-agent by its own definition; chat, synthesis, scoring and summaries never.
 */
function mayMutate(
  config: TarsyConfig,
  chain: ChainConfig,
  record: ExecutionRecord,
  request: ExecutionRequested,
): boolean {
  if (record.parent) return config.agents.get(record.agentName)?.type === "action";
  if (request.kind === "action") return true;
  if (request.kind !== "investigation") return false;
  const { agentRef } = stageAgentRef(chain, record, record.agentIndex);
  return resolveAgentType(config, agentRef) === "action";
}

/**
 * Everything an execution runs with: its agent configuration resolved through the hierarchy
 * (with the alert's MCP selection replacing the server list), prompts' inputs (among them the
 * session's runbook as stored on it, see `runbook.ts`) and the per-server instructions and
 * summarization settings.
 */
export function resolveExecutionContext(
  config: TarsyConfig,
  record: ExecutionRecord,
  request: ExecutionRequested,
  runbook: SessionRunbookRecord | null,
  now: Date = new Date(),
): ExecutionContext {
  const chain = config.chains.get(record.session.chainId);
  if (!chain) {
    throw new ExecutionConfigError(`chain "${record.session.chainId}" is not configured`);
  }
  const resolved = resolveFor(config, chain, record, request);
  const usesTools =
    request.kind === "investigation" || request.kind === "action" || request.kind === "chat";
  // Skills are for the agents that work the alert: not synthesis, summary or the judge.
  const usesSkills =
    request.kind === "investigation" || request.kind === "action" || request.kind === "chat";
  let servers: string[] = [];
  let toolFilters: Record<string, string[]> = {};
  let nativeTools = resolved.native_tools;
  let nativeToolsOverride: NativeToolsConfig | undefined;
  if (usesTools) {
    const parsed = McpSelectionSchema.safeParse(record.session.mcpSelection);
    const selection = parsed.success ? parsed.data : null;
    const mcp = resolveMcpSelection(config, resolved, selection);
    servers = mcp.server_ids;
    toolFilters = mcp.tool_filter;
    if (mcp.native_tools_override) {
      nativeTools = mcp.native_tools_override;
      nativeToolsOverride = mcp.native_tools_override;
    }
  }
  const mcpInstructions = new Map<string, string>();
  const summarization = new Map<string, SummarizationSettings>();
  for (const id of servers) {
    const server = config.mcpServers.get(id);
    if (!server) continue;
    if (server.instructions) mcpInstructions.set(id, server.instructions);
    const model = resolveSummarizationModel(config, id);
    summarization.set(id, {
      enabled: server.summarization.enabled,
      sizeThresholdTokens: server.summarization.size_threshold_tokens,
      summaryMaxTokenLimit: server.summarization.summary_max_token_limit,
      ...(model && {
        model: {
          providerName: model.llm_provider_name,
          llm: llmConfigFor(model.llm_provider, model.llm_backend),
          streamLimits: streamLimitsOf(model.llm_provider),
        },
      }),
    });
  }
  const summarizationFallbacks = usesTools ? resolveSummarizationFallbacks(config) : undefined;
  return {
    sessionId: record.sessionId,
    stageId: record.stageId,
    executionId: record.id,
    kind: request.kind,
    agentName: record.agentName,
    agentIndex: record.agentIndex,
    alertType: record.session.alertType,
    alertData: record.session.alertData,
    ...(runbook?.content ? { runbook: runbook.content } : {}),
    ...(request.context !== undefined && { previousContext: request.context }),
    ...(record.parent && {
      subAgent: { task: record.task ?? request.task ?? "", parentExecutionId: record.parent.id },
    }),
    ...(request.kind === "chat" && {
      chat: {
        question: request.chat?.question ?? "",
        investigationContext: request.context ?? "",
      },
    }),
    ...(request.feedback && {
      feedback: {
        reflectionId: request.feedback.reflection_id,
        text: request.feedback.text,
        qualityRating: request.feedback.quality_rating,
      },
    }),
    config: {
      agentName: resolved.agent_name,
      providerName: resolved.llm_provider_name,
      llm: llmConfigFor(resolved.llm_provider, resolved.llm_backend, nativeTools),
      streamLimits: streamLimitsOf(resolved.llm_provider),
      fallbacks: resolved.fallback_providers.map((entry) => ({
        providerName: entry.provider_name,
        llm: llmConfigFor(
          entry.provider,
          entry.backend,
          entry.backend !== "google-native"
            ? undefined
            : request.kind === "compose"
              ? resolved.native_tools // all off: compose never searches
              : (nativeToolsOverride ?? entry.native_tools),
        ),
        streamLimits: streamLimitsOf(entry.provider),
      })),
      requiresNativeTools: resolved.requires_native_tools,
      maxIterations: Math.max(1, resolved.max_iterations),
      iterationTimeoutMs: resolved.iteration_timeout_ms,
      mcpServers: servers,
      nonIdempotentServers: servers.filter((id) => config.mcpServers.get(id)?.idempotent === false),
      toolFilters,
      allowMutatingTools: usesTools && mayMutate(config, chain, record, request),
      approval: {
        mode: config.agents.get(record.agentName)?.approval ?? "required",
        timeoutMs:
          config.agents.get(record.agentName)?.approval_timeout_ms ??
          config.defaults.approval.timeout_ms,
      },
      requiredSkills: usesSkills ? resolved.required_skills : [],
      onDemandSkills: usesSkills ? resolved.on_demand_skills : [],
      // Depth 1: a sub-agent never dispatches; only the tool-using agents orchestrate.
      subAgents:
        usesTools && !record.parent
          ? resolved.sub_agents.map((a) => ({
              name: a.name,
              description: a.description,
              mcpServers: [...a.mcp_servers],
            }))
          : [],
      orchestrator: resolved.orchestrator,
      ...(resolved.custom_instructions !== undefined && {
        customInstructions: resolved.custom_instructions,
      }),
    },
    mcpInstructions,
    summarization,
    ...(summarizationFallbacks && {
      summarizationFallbacks: summarizationFallbacks.map((entry) => ({
        providerName: entry.provider_name,
        llm: llmConfigFor(entry.provider, entry.backend),
        streamLimits: streamLimitsOf(entry.provider),
      })),
    }),
    failedServers: {},
    now,
    holidays: config.system.holidays,
    promptCaching: config.system.prompt_caching.enabled,
    ...(request.kind === "executive_summary" && { labelMap: resolveLabelMap(config, chain) }),
  };
}
