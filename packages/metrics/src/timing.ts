/** Seconds since a `performance.now()` reading. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1_000;
}

/** Seconds from `start` to `end` (0 when the clock went backwards). */
export function secondsBetween(start: Date, end: Date): number {
  return Math.max(0, end.getTime() - start.getTime()) / 1_000;
}
