/** Figures of a run of animation frames (the deltas between `requestAnimationFrame` callbacks). */
export interface FrameStats {
  /** Frames measured (deltas between consecutive callbacks). */
  frames: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Share of frames longer than one 60 Hz frame, in percent (see `FRAME_BUDGET_MS`). */
  overBudgetPct: number;
  /** 60 Hz frames missed in all: a delta of n frame intervals missed n − 1. */
  dropped: number;
}

/** One frame at 60 Hz. */
export const FRAME_MS = 1000 / 60;
/**
 * A frame is over budget past 16.7 ms plus 1 ms: Chromium's frame timestamps are rounded to
 * 0.1 ms and jitter by a few tenths around 16.7 on an idle page.
 */
export const FRAME_BUDGET_MS = FRAME_MS + 1;

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export function frameStats(deltas: readonly number[]): FrameStats {
  const sorted = [...deltas].sort((a, b) => a - b);
  const over = sorted.filter((d) => d > FRAME_BUDGET_MS).length;
  const dropped = sorted.reduce((sum, d) => sum + Math.max(0, Math.round(d / FRAME_MS) - 1), 0);
  return {
    frames: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    overBudgetPct: sorted.length ? (100 * over) / sorted.length : Number.NaN,
    dropped,
  };
}
