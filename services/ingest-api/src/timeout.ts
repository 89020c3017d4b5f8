import { withTimeout as raceTimeout } from "@tarsy/runtime";

export class TimeoutError extends Error {
  readonly code = "timeout" as const;
}

/** Resolves like `promise`, or rejects with TimeoutError after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return raceTimeout(promise, ms, () => new TimeoutError(`${what} timed out after ${ms} ms`));
}
