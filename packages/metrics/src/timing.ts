import type { Histogram, LabelValues } from "prom-client";

/** Seconds since a `performance.now()` reading. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1_000;
}

/** Seconds from `start` to `end` (0 when the clock went backwards). */
export function secondsBetween(start: Date, end: Date): number {
  return Math.max(0, end.getTime() - start.getTime()) / 1_000;
}

/**
 * Runs `fn` and observes how long it took, also when it throws. `labels` may be a function of
 * the outcome (the result, or the error), e.g. to label by status.
 */
export async function timed<T, L extends string>(
  histogram: Histogram<L>,
  labels:
    | LabelValues<L>
    | ((outcome: { ok: true; value: T } | { ok: false; error: unknown }) => LabelValues<L>),
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const observe = (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => {
    const values = typeof labels === "function" ? labels(outcome) : labels;
    histogram.observe(values, secondsSince(started));
  };
  try {
    const value = await fn();
    observe({ ok: true, value });
    return value;
  } catch (error) {
    observe({ ok: false, error });
    throw error;
  }
}
