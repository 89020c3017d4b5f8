const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const DURATION_RE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART_RE = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/**
 * Parses a Go-style duration (`500ms`, `40m`, `1h30m`, `1.5s`) into milliseconds.
 * Returns undefined when the text is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  if (!DURATION_RE.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(PART_RE)) {
    const unit = UNIT_MS[match[2] ?? ""] ?? 0;
    total += Number(match[1]) * unit;
  }
  return Math.round(total);
}

/** Formats milliseconds the way the YAML writes them (`15m`, `500ms`, `1h30m`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0";
  if (ms % 1000 !== 0) return `${ms}ms`;
  let seconds = ms / 1000;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return `${hours ? `${hours}h` : ""}${minutes ? `${minutes}m` : ""}${seconds ? `${seconds}s` : ""}`;
}
