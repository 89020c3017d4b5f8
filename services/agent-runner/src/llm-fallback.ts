import type { ExecutionKind } from "@tarsy/contracts";
import { LlmClientError } from "@tarsy/llm-client";
import {
  ExecutionAbortedError,
  IterationTimeoutError,
  LlmFirstChunkTimeoutError,
  LlmProviderError,
  LlmStreamStalledError,
} from "./errors.ts";
import type { AgentRunConfig, FallbackCandidate } from "./execution-context.ts";

/**
 * What a failed LLM call counts toward (TARSy's fallback triggers):
 * - `immediate`: bad credentials, an exhausted quota, or llm-service retried a transient error
 *   as often as it may;
 *   the same provider would fail again, so the next provider is tried at once.
 * - `provider_errors`: a provider error, an invalid request, no first chunk in time, or a
 *   transport failure before any output; two in a row switch.
 * - `partial_stream`: the answer broke off after it had started (an in-band partial stream
 *   error, a stall, a cut stream); two in a row switch, on a counter of their own.
 */
export type FallbackTrigger = "immediate" | "provider_errors" | "partial_stream";

/**
 * Provider error codes that no retry of the same provider can fix: bad credentials, an
 * exhausted quota or spending cap (a 429 no wait fixes), a configuration llm-service cannot
 * run, a scripted provider with nothing left to say.
 */
const UNFIXABLE_CODES = new Set(["auth", "quota_exhausted", "invalid_config", "script_exhausted"]);

/** How a failure counts toward fallback; null when it is not the provider's (abort, timeout). */
export function fallbackTrigger(error: Error, receivedOutput: boolean): FallbackTrigger | null {
  if (error instanceof ExecutionAbortedError || error instanceof IterationTimeoutError) {
    return null;
  }
  if (error instanceof LlmProviderError) {
    if (UNFIXABLE_CODES.has(error.providerCode)) return "immediate";
    if (error.partialOutput) return "partial_stream";
    if (error.retriesExhausted) return "immediate";
    return "provider_errors";
  }
  if (error instanceof LlmStreamStalledError) return "partial_stream";
  if (error instanceof LlmFirstChunkTimeoutError) return "provider_errors";
  if (error instanceof LlmClientError) return receivedOutput ? "partial_stream" : "provider_errors";
  return "provider_errors";
}

/** Failures in a row that switch provider; single-shot kinds switch at the first. */
const THRESHOLD = 2;
const SINGLE_SHOT_KINDS: ReadonlySet<ExecutionKind> = new Set([
  "synthesis",
  "executive_summary",
  "compose",
]);

export interface FallbackSwitch {
  from: { providerName: string; backend: string };
  to: FallbackCandidate;
  /** 1-based position of `to` in the fallback list. */
  attempt: number;
  trigger: FallbackTrigger;
  /** Entries passed over because they cannot serve the agent's Gemini native tools. */
  skippedIncompatible: string[];
}

/**
 * The fallback state of one execution. The switch is sticky: once an execution has moved to
 * a fallback provider it stays there, and a provider it has left is never chosen again.
 * Counters of consecutive failures reset on a successful call and on a switch.
 */
export class ProviderFallback {
  readonly original: { providerName: string; backend: string; reasoningEffort?: string };
  private readonly attempted: Set<string>;
  private readonly threshold: number;
  private next = 0;
  private providerErrors = 0;
  private partialErrors = 0;

  /**
   * A summarization walk (ADR-0024): local to the summary calls (no `provider_fallback` event,
   * no change of the execution's provider), switching at the first failure, and never skipping
   * entries for native tools (summaries use none).
   */
  readonly local: boolean;

  constructor(
    private readonly config: AgentRunConfig,
    kind: ExecutionKind | "summarization",
  ) {
    this.original = {
      providerName: config.providerName,
      backend: config.llm.backend ?? "",
      ...(config.llm.reasoningEffort !== undefined && {
        reasoningEffort: config.llm.reasoningEffort,
      }),
    };
    this.attempted = new Set([config.providerName]);
    this.local = kind === "summarization";
    this.threshold = kind === "summarization" || SINGLE_SHOT_KINDS.has(kind) ? 1 : THRESHOLD;
  }

  get hasFallenBack(): boolean {
    return this.config.providerName !== this.original.providerName;
  }

  /** A call succeeded: failures are no longer "in a row". */
  recordSuccess(): void {
    this.providerErrors = 0;
    this.partialErrors = 0;
  }

  /**
   * Counts a failure. Returns true when the provider has failed this way too often in a row
   * to be tried again (whether or not a fallback is left).
   */
  recordFailure(trigger: FallbackTrigger): boolean {
    if (trigger === "immediate") return true;
    if (trigger === "partial_stream") {
      this.partialErrors++;
      this.providerErrors = 0;
      return this.partialErrors >= this.threshold;
    }
    this.providerErrors++;
    this.partialErrors = 0;
    return this.providerErrors >= this.threshold;
  }

  /**
   * Moves the execution to the next usable fallback entry (skipping providers already tried
   * and, for agents that need Gemini native tools, entries that cannot serve them). Returns
   * the switch, or null when no entry is left.
   */
  switchProvider(trigger: FallbackTrigger): FallbackSwitch | null {
    const skippedIncompatible: string[] = [];
    const list = this.config.fallbacks;
    while (this.next < list.length) {
      const index = this.next++;
      const candidate = list[index] as FallbackCandidate;
      if (this.attempted.has(candidate.providerName)) continue;
      if (this.config.requiresNativeTools && candidate.llm.backend !== "google-native") {
        skippedIncompatible.push(candidate.providerName);
        continue;
      }
      const from = {
        providerName: this.config.providerName,
        backend: this.config.llm.backend ?? "",
      };
      this.attempted.add(candidate.providerName);
      this.config.providerName = candidate.providerName;
      this.config.llm = candidate.llm;
      this.config.streamLimits = candidate.streamLimits;
      this.recordSuccess();
      return { from, to: candidate, attempt: index + 1, trigger, skippedIncompatible };
    }
    return null;
  }
}
