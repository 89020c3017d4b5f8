import { ConfigError } from "../errors.ts";
import type { LlmConfig } from "../request.ts";

/** The reasoning-effort levels TARSy accepts (`llm_providers.*.reasoning_effort`). */
export const REASONING_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** The request's reasoning effort, or undefined when it leaves the provider's default. */
export function reasoningEffort(config: LlmConfig): ReasoningEffort | undefined {
  const effort = config.reasoning_effort.trim().toLowerCase();
  if (!effort) return undefined;
  if (!(REASONING_EFFORTS as readonly string[]).includes(effort)) {
    throw new ConfigError(
      `reasoning_effort "${config.reasoning_effort}" is not one of ${REASONING_EFFORTS.join(", ")}`,
    );
  }
  return effort as ReasoningEffort;
}

/** Gemini's thinking levels stop at high: xhigh and max ask for the most it has. */
export function geminiThinkingLevel(effort: ReasoningEffort): "low" | "medium" | "high" {
  return effort === "low" || effort === "medium" ? effort : "high";
}
