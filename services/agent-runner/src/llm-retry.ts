import { setTimeout as sleep } from "node:timers/promises";

/** How the runner rides out llm-service restarts and stalled streams. */
export interface LlmRetryPolicy {
  /** How long one LLM call keeps retrying transport failures (from its first attempt). */
  budgetMs: number;
  /** First backoff; doubles per attempt up to `maxDelayMs`, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An attempt that has sent no chunk after this long is abandoned and retried. */
  firstChunkTimeoutMs: number;
  /** An attempt whose stream is silent this long between chunks is abandoned and retried. */
  stallTimeoutMs: number;
}

export const DEFAULT_LLM_RETRY_POLICY: LlmRetryPolicy = {
  budgetMs: 300_000,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  firstChunkTimeoutMs: 120_000,
  stallTimeoutMs: 60_000,
};

/**
 * Backoff before retry number `retry` (1-based): exponential, capped, with "equal jitter"
 * (half fixed, half random) so runners that lost the same replica do not retry in step.
 */
export function backoffDelay(
  retry: number,
  policy: Pick<LlmRetryPolicy, "baseDelayMs" | "maxDelayMs">,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Waits `ms`; false when the signal fired first. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
