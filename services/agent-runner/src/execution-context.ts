import type { Holiday, LabelMapConfig, OrchestratorLimits, ResolvedSkill } from "@tarsy/config";
import type { ExecutionKind } from "@tarsy/contracts";
import type { LlmConfig } from "@tarsy/llm-client";

/** Per-server summarization settings (from the MCP server config). */
export interface SummarizationSettings {
  enabled: boolean;
  sizeThresholdTokens: number;
  summaryMaxTokenLimit: number;
  /**
   * The model that summarizes this server's results (its own, else `defaults.summarization`);
   * absent: the calling agent's model.
   */
  model?: SummarizationModel;
}

/** A provider summaries are asked of (never with native tools). */
export interface SummarizationModel {
  providerName: string;
  llm: LlmConfig;
  streamLimits: ProviderStreamLimits;
}

/** Per-provider overrides of the runner's first-chunk and stall timeouts. */
export interface ProviderStreamLimits {
  firstChunkTimeoutMs?: number;
  stallTimeoutMs?: number;
}

/** A provider the execution may switch to (one `fallback_providers` entry, resolved). */
export interface FallbackCandidate {
  providerName: string;
  llm: LlmConfig;
  streamLimits: ProviderStreamLimits;
}

/**
 * The agent configuration after the hierarchy was applied (what the controllers run with).
 * A provider fallback replaces `providerName`, `llm` and `streamLimits` for the rest of the
 * execution.
 */
export interface AgentRunConfig {
  /** Registry name (for replicas the base name). */
  agentName: string;
  providerName: string;
  llm: LlmConfig;
  streamLimits: ProviderStreamLimits;
  /** In order; the first usable one replaces a provider that keeps failing. */
  fallbacks: FallbackCandidate[];
  /** The agent's definition enables Gemini native tools: only google-native entries serve it. */
  requiresNativeTools: boolean;
  maxIterations: number;
  iterationTimeoutMs: number;
  mcpServers: string[];
  /** Servers marked `idempotent: false`: a call cut off by an interruption is not repeated. */
  nonIdempotentServers?: string[];
  /** server → allowed tools; absent or empty allows all. */
  toolFilters: Record<string, string[]>;
  /**
   * The gateway lists and runs mutating tools for this execution: `type: action` agents only
   * (a sub-agent by its own definition). Absent: no.
   */
  allowMutatingTools?: boolean;
  /**
   * Its mutating calls (with `allowMutatingTools`): each waits for a person's decision
   * (`required`, the default) for at most `timeoutMs`, or is approved at once (`auto`).
   */
  approval?: { mode: "required" | "auto"; timeoutMs: number };
  customInstructions?: string;
  /** Skills whose bodies are in the system prompt ("Pre-loaded Skills"). */
  requiredSkills: ResolvedSkill[];
  /** The `load_skill` catalog; empty: no catalog and no `load_skill` tool. */
  onDemandSkills: ResolvedSkill[];
  /** Agents this one may dispatch; empty: no orchestration tools (always empty for a sub-agent). */
  subAgents: SubAgentCatalogEntry[];
  /** Limits of its sub-agents (concurrency, per-agent timeout, total budget). */
  orchestrator: OrchestratorLimits;
}

/** One agent an orchestrating agent may dispatch, as its prompt's catalog shows it. */
export interface SubAgentCatalogEntry {
  name: string;
  description: string;
  mcpServers: string[];
}

/** Everything one agent execution needs, resolved before a controller runs. */
export interface ExecutionContext {
  sessionId: string;
  stageId: string | null;
  executionId: string;
  kind: ExecutionKind;
  /** Display name (`{Name}-{n}` for replicas). */
  agentName: string;
  agentIndex: number;
  alertType: string;
  /** Masked by ingest-api; passed to the LLM verbatim. */
  alertData: string;
  runbook?: string;
  /** Previous stages (investigation), the investigations (synthesis) or the final analysis (executive summary). */
  previousContext?: string;
  chat?: { question: string; investigationContext: string };
  /** The reviewer's feedback, for kind `feedback_reflection`. */
  feedback?: { reflectionId: string; text: string; qualityRating: string | null };
  config: AgentRunConfig;
  /** server id → its instructions (tier 2). */
  mcpInstructions: ReadonlyMap<string, string>;
  summarization: ReadonlyMap<string, SummarizationSettings>;
  /**
   * The walk of failed summarization calls (`defaults.summarization.fallback_list`); absent:
   * the agent's own list. Walked locally: the investigator's provider never changes.
   */
  summarizationFallbacks?: FallbackCandidate[];
  /** A dispatched sub-agent: its task (its whole user prompt) and the execution that dispatched it. */
  subAgent?: { task: string; parentExecutionId: string };
  /** Tier 4: "Lessons from Past Investigations" (filled when memories were injected). */
  lessons?: string;
  /** Servers that failed to start for this execution, with why (filled after listing tools). */
  failedServers: Record<string, string>;
  /** When the execution started (the prompts' calendar); default: when the prompt is built. */
  now?: Date;
  /** Executive summaries: the chain's active label map (`label_maps`). */
  labelMap?: { name: string; map: LabelMapConfig };
  /**
   * `system.prompt_caching.enabled` (default true): loop calls mark their stable prefix for
   * the provider's prompt cache. Cluster-wide, copied here when the context is built.
   */
  promptCaching?: boolean;
  /** `system.holidays` (empty: the built-in list). */
  holidays?: readonly Holiday[];
}
