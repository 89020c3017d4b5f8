/** Small display helpers. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || ms < 0) return "—";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

export function elapsedSince(iso: string | null | undefined, now: number): string {
  return iso ? formatDuration(now - new Date(iso).getTime()) : "—";
}

/** The alert data pretty-printed when it is JSON, as is otherwise. */
export function prettyData(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function prettyJson(value: unknown): string {
  if (typeof value === "string") return prettyData(value);
  return JSON.stringify(value, null, 2) ?? "null";
}

export type CodeLanguage = "json" | "yaml" | "text";

/** JSON when it parses as JSON, YAML when it looks like `key: value` lines, else text. */
export function detectLanguage(text: string): CodeLanguage {
  const t = text.trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      JSON.parse(t);
      return "json";
    } catch {
      // not JSON after all
    }
  }
  if (/^(---\s*\n)?[\w.-]+:(\s|$)/.test(t) && t.includes("\n")) return "yaml";
  return "text";
}

/**
 * What the masking writes where it acted (packages/masking: `[MASKED_X]` replacements and the
 * fail-closed `TOOL_RESULT_REDACTED_NOTICE`). Timeline events carry no redaction count, so a
 * tool result counts as masked when it holds one of these.
 */
const MASKED = /\[MASKED_[A-Z_]+\]|\[REDACTED: data masking failure/;

export function wasMasked(text: string): boolean {
  return MASKED.test(text);
}

/** USD as the dashboard shows it: 4 decimals below a dollar ("$0.0123"), cents above. */
export function formatUsd(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/**
 * An estimated cost's text and, when it is not the whole story, the note explaining why:
 * partial (some LLM calls had no price) is marked with "*", none shows "—".
 */
export function describeCost(cost: {
  estimated_cost_usd: number;
  cost_completeness: "complete" | "partial" | "none";
  unpriced_interactions: number;
}): { text: string; note: string | null } {
  const unpriced = cost.unpriced_interactions;
  const calls = `${unpriced} LLM call${unpriced === 1 ? "" : "s"}`;
  switch (cost.cost_completeness) {
    case "complete":
      return { text: formatUsd(cost.estimated_cost_usd), note: null };
    case "partial":
      return {
        text: `${formatUsd(cost.estimated_cost_usd)}*`,
        note: `Partial estimate: ${calls} without a price (unknown model or estimation disabled)`,
      };
    case "none":
      return {
        text: "—",
        note:
          unpriced === 0
            ? "No LLM calls yet"
            : `No estimate: ${calls} without a price (unknown model or estimation disabled)`,
      };
    default: {
      const never: never = cost.cost_completeness;
      return never;
    }
  }
}
