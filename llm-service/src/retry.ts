import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@tarsy/runtime";
import {
  CancelledError,
  type ClassifyContext,
  classifyError,
  type LlmServiceError,
  MAX_RETRY_HINT_MS,
} from "./errors.ts";

export interface RetryPolicy {
  /** Retries after the first attempt (3 = up to 4 attempts). */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 1000,
  maxDelayMs: 10_000,
};

/**
 * The wait before retry number `retry` + 1 (0-based): the provider's own hint
 * (Retry-After, RetryInfo; at most 60 s, taken as given), else exponential backoff with full
 * jitter: uniform in [0, min(maxDelay, base · 2^retry)].
 */
export function backoffDelay(
  policy: RetryPolicy,
  retry: number,
  hintMs?: number,
  random: () => number = Math.random,
): number {
  if (hintMs !== undefined && hintMs > 0 && hintMs <= MAX_RETRY_HINT_MS) return hintMs;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(random() * ceiling);
}

export interface RetryOptions {
  policy: RetryPolicy;
  classify: Omit<ClassifyContext, "signal">;
  signal: AbortSignal;
  logger: Logger;
}

/**
 * Runs `attempt` and re-runs it on transient errors (429, 408, 5xx, network, empty response),
 * but only while nothing has reached the caller yet: a stream that already produced output
 * is never replayed (the caller would see duplicated text). Throws the classified error
 * when retries are exhausted, the error is permanent, or the caller went away; backoff
 * sleeps end at once on cancellation.
 */
export async function* withRetry<T>(
  attempt: () => AsyncIterable<T>,
  options: RetryOptions,
): AsyncGenerator<T> {
  const { policy, signal, logger } = options;
  const ctx: ClassifyContext = { ...options.classify, signal };
  for (let retry = 0; ; retry++) {
    let emitted = false;
    try {
      for await (const chunk of attempt()) {
        emitted = true;
        yield chunk;
      }
      return;
    } catch (err) {
      const classified: LlmServiceError = classifyError(err, ctx);
      if (signal.aborted) throw new CancelledError("request cancelled by the caller");
      if (emitted) classified.partialOutput = true;
      if (!classified.retryable || emitted) throw classified;
      if (retry >= policy.maxRetries) {
        if (retry > 0) {
          classified.message = `${classified.message} (gave up after ${retry + 1} attempts)`;
        }
        classified.retriesExhausted = true;
        throw classified;
      }
      const delayMs = backoffDelay(policy, retry, classified.retryAfterMs);
      logger.warn(
        { code: classified.code, retry: retry + 1, delayMs },
        "transient provider error; retrying",
      );
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        throw new CancelledError("request cancelled by the caller");
      }
    }
  }
}

/**
 * withRetry for a call with one result (Embed): retried on the same transient errors, with
 * the same backoff, and failing with the same classified error.
 */
export async function retryCall<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  for await (const result of withRetry(async function* () {
    yield await attempt();
  }, options)) {
    return result;
  }
  throw new Error("retryCall: the attempt produced no result");
}
