import {
  type UsageSummaryResponse,
  UsageSummaryResponseSchema,
  type UsageTotals,
} from "@tarsy/contracts";
import { callApi } from "../api.ts";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
  parseCommandArgs,
  UsageError,
} from "../command.ts";

const USAGE = `Usage: tarsy usage [--since 7d] [--rank-by cost|tokens] [--top N] [--type TYPE] [--chain ID]

LLM usage and its estimated cost (GET /api/v1/usage/summary) over the sessions you may read:
the totals, then the top models and sessions.

Options:
      --since AGE        the window: the last AGE, in hours or days (24h, 7d; default 30d)
      --rank-by WHAT     cost (default) or tokens: the order of models and sessions
      --top N            how many sessions (default 10, at most 100)
  -t, --type TYPE        only this alert type
      --chain ID         only this chain
  -o, --output FORMAT    text (tables) or json (the API's answer)
      --json             same as --output json
  -h, --help             show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = {
  since: { type: "string" },
  "rank-by": { type: "string" },
  top: { type: "string" },
  type: { type: "string", short: "t" },
  chain: { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

const AGE = /^(\d+)([hd])$/;

/** The API query: `--since` as the start instant before `now`, the rest as they are. */
export function usageQuery(
  values: { since?: string; "rank-by"?: string; top?: string; type?: string; chain?: string },
  now: number = Date.now(),
): URLSearchParams {
  const q = new URLSearchParams();
  const since = values.since ?? "30d";
  const age = AGE.exec(since);
  if (!age || Number(age[1]) === 0) {
    throw new UsageError(`--since: expected hours or days such as 24h or 7d, got ${since}`);
  }
  const ms = Number(age[1]) * (age[2] === "h" ? 3_600_000 : 86_400_000);
  q.set("start_date", new Date(now - ms).toISOString());
  // Without --rank-by the server ranks by cost, or by tokens while cost estimation is off.
  const rankBy = values["rank-by"];
  if (rankBy !== undefined) {
    if (rankBy !== "cost" && rankBy !== "tokens") {
      throw new UsageError(`--rank-by: expected cost or tokens, got ${rankBy}`);
    }
    q.set("rank_by", rankBy);
  }
  if (values.top !== undefined) {
    const top = Number(values.top);
    if (!Number.isInteger(top) || top < 1 || top > 100) {
      throw new UsageError(`--top: expected a whole number from 1 to 100, got ${values.top}`);
    }
    q.set("top", String(top));
  }
  if (values.type !== undefined) q.set("alert_type", values.type);
  if (values.chain !== undefined) q.set("chain_id", values.chain);
  return q;
}

const usd = (n: number) => `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2)}`;
const count = (n: number) => n.toLocaleString("en-US");
const priced = (t: Omit<UsageTotals, "sessions">) =>
  t.cost_completeness === "complete"
    ? "all"
    : t.cost_completeness === "none"
      ? "none"
      : `${t.unpriced_interactions} unpriced`;

/** `; 3,000 cache read, 200 cache write` when a prompt cache was used (input is uncached). */
function cacheNote(t: UsageTotals): string {
  if (t.cache_read_tokens === 0 && t.cache_creation_tokens === 0) return "";
  return `; ${count(t.cache_read_tokens)} cache read, ${count(t.cache_creation_tokens)} cache write`;
}

function table(head: readonly string[], rows: string[][], right: ReadonlySet<number>): string {
  const all = [head as string[], ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all
    .map((r) =>
      r
        .map((cell, i) =>
          right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The totals, then the models and the top sessions as aligned tables. */
export function formatUsage(answer: UsageSummaryResponse): string {
  const t = answer.totals;
  const cost =
    t.cost_completeness === "complete"
      ? usd(t.estimated_cost_usd)
      : `${usd(t.estimated_cost_usd)} (${t.unpriced_interactions} of ${t.llm_interactions} interactions unpriced)`;
  const lines = [
    `LLM usage ${answer.start_date} → ${answer.end_date}, ranked by ${answer.rank_by}`,
    `Estimated cost  ${cost}`,
    `Tokens          ${count(t.total_tokens)} (${count(t.input_tokens)} in, ${count(t.output_tokens)} out, ${count(t.thinking_tokens)} thinking)${cacheNote(t)}`,
    `Sessions        ${count(t.sessions)}`,
    `Interactions    ${count(t.llm_interactions)}`,
  ];
  if (t.llm_interactions === 0) return `${lines.join("\n")}\n`;
  const numbers = new Set([1, 2, 3]);
  const models = table(
    ["MODEL", "COST", "TOKENS", "CACHE READ", "CACHE WRITE", "INTERACTIONS", "PRICED"],
    answer.by_model.map((m) => [
      m.model,
      usd(m.estimated_cost_usd),
      count(m.total_tokens),
      count(m.cache_read_tokens),
      count(m.cache_creation_tokens),
      count(m.llm_interactions),
      priced(m),
    ]),
    new Set([1, 2, 3, 4, 5]),
  );
  const sessions = table(
    ["SESSION", "COST", "TOKENS", "INTERACTIONS", "PRICED", "TYPE", "CHAIN", "STATUS"],
    answer.top_sessions.map((s) => [
      s.session_id,
      usd(s.estimated_cost_usd),
      count(s.total_tokens),
      count(s.llm_interactions),
      priced(s),
      s.alert_type,
      s.chain_id,
      s.status,
    ]),
    numbers,
  );
  return `${lines.join("\n")}\n\n${models}\n\n${sessions}\n`;
}

export const usageCommand: Command = {
  path: ["usage"],
  summary: "print LLM usage and estimated cost: totals, top models and sessions",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const answer = await callApi(env, {
      method: "GET",
      path: `/api/v1/usage/summary?${usageQuery(values)}`,
      schema: UsageSummaryResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatUsage(answer));
    return EXIT.ok;
  },
};
