import type { ForcedConclusionReason, TokenUsage } from "@tarsy/contracts";
import type { ConversationMessage, LlmClient, ToolCall } from "@tarsy/llm-client";
import type { ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import type { AgentRunConfig, ExecutionContext } from "./execution-context.ts";
import type { ProviderFallback } from "./llm-fallback.ts";
import type { LlmRetryPolicy } from "./llm-retry.ts";
import type { MemoryRuntime } from "./memory.ts";
import type { RunnerStore, TimelineEventRecord, ToolGateway } from "./ports.ts";
import type { SubAgentRuntime } from "./sub-agents.ts";
import type { TimeBudget } from "./time-budget.ts";
import type { Timeline } from "./timeline.ts";

/** What a controller runs with: the resolved execution plus live dependencies. */
export interface RunContext {
  exec: ExecutionContext;
  llm: Pick<LlmClient, "generate">;
  /** How LLM calls ride out llm-service restarts and stalled streams. */
  llmRetry: LlmRetryPolicy;
  /** The execution's provider fallback state (sticky for the execution). */
  fallback: ProviderFallback;
  tools: ToolGateway;
  store: RunnerStore;
  timeline: Timeline;
  logger: Logger;
  /** Fires on cancel, session timeout or shutdown; its reason is an ExecutionAbortedError. */
  signal: AbortSignal;
  /** Time left before the execution's deadline, and when to wrap up. */
  budget: TimeBudget;
  usage: UsageTotals;
  /** Trace records (interactions) written behind the loop, in order. */
  writes: WriteBehind;
  metrics: RunnerMetrics;
  /** Investigation memory; absent when `defaults.memory` is off. */
  memory?: MemoryRuntime;
  /** The memories injected into this execution's prompt (recall leaves them out). */
  injectedMemoryIds?: string[];
  /** This runner's id (in audit records). */
  runnerId: string;
  /** Masks text for people to read (an action request's arguments and reason). */
  maskForDisplay(text: string): string;
  /**
   * Parks the execution until its pending action request is decided (no runner slot held):
   * "suspended" (the caller throws ExecutionSuspendedError) or "decided" (go on now).
   */
  parkForAction(actionId: string): Promise<"suspended" | "decided">;
  /** An orchestrating agent's sub-agents (absent for every other execution). */
  subAgents?: SubAgentRuntime;
  /** Summarization walks, by the primary provider they started from (sticky per primary). */
  summarizers?: Map<string, { config: AgentRunConfig; fallback: ProviderFallback }>;
  /**
   * A resumed execution: the stored conversation its loop continues. After an interrupted
   * attempt, `pendingCalls` are the last turn's calls that have no result yet (made again
   * before the next LLM call, once) and `interrupted` the events that attempt left open.
   */
  resume?: {
    messages: ConversationMessage[];
    lastId: string | null;
    pendingCalls?: readonly ToolCall[];
    interrupted?: readonly TimelineEventRecord[];
  };
}

/** The runner's own metrics (events, redeliveries and the backlog come from the bus). */
export type RunnerMetrics = Pick<
  ServiceMetrics<"agent-runner">,
  | "executionDuration"
  | "llmRequests"
  | "llmRequestDuration"
  | "llmTokens"
  | "llmFallbacks"
  | "workOrphaned"
  | "sessionLabelsParseFailures"
  | "actionRequests"
>;

/**
 * Writes that must happen, in order, but need not hold up the loop (LLM and MCP interaction
 * records). `drain` waits for all of them; a failed write is logged, never thrown.
 */
export class WriteBehind {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (err: unknown) => void) {}

  enqueue(write: () => Promise<unknown>): void {
    this.tail = this.tail.then(write).then(
      () => undefined,
      (err: unknown) => this.onError(err),
    );
  }

  drain(): Promise<void> {
    return this.tail;
  }
}

export class UsageTotals {
  input = 0;
  output = 0;
  thinking = 0;
  total = 0;
  calls = 0;

  add(usage: TokenUsage | null): void {
    if (!usage) return;
    this.calls++;
    this.input += usage.input_tokens;
    this.output += usage.output_tokens;
    this.thinking += usage.thinking_tokens ?? 0;
    this.total += usage.total_tokens;
  }

  toTokenUsage(): TokenUsage {
    return {
      input_tokens: this.input,
      output_tokens: this.output,
      total_tokens: this.total,
      thinking_tokens: this.thinking,
    };
  }
}

/** What a controller returns (intermediate state is already stored). */
export interface ControllerResult {
  finalAnalysis: string;
  /** Action agents only: their YES/NO last line (null when missing or unreadable). */
  actionsExecuted?: boolean | null;
  /** Executive summaries: the labels of their `LABELS:` line (null when unreadable). */
  labels?: string[] | null;
  /** Iterating agents made to conclude: why (absent when they concluded by themselves). */
  forcedConclusion?: ForcedConclusionReason;
}
