/** The Usage page's filters, kept in the URL (`/usage?range=7d&rank_by=tokens`). */

const DAY_MS = 86_400_000;

/** Relative ranges: `range=7d` means "the last 7 days" whenever the link is opened. */
export const USAGE_RANGES = {
  "24h": DAY_MS,
  "7d": 7 * DAY_MS,
  "30d": 30 * DAY_MS,
  "90d": 90 * DAY_MS,
} as const;
export type UsageRange = keyof typeof USAGE_RANGES;
export type UsageRankBy = "cost" | "tokens";

export interface UsageState {
  range: UsageRange;
  alert_type: string;
  chain_id: string;
  rank_by: UsageRankBy;
}

export const DEFAULT_USAGE_STATE: UsageState = {
  range: "30d",
  alert_type: "",
  chain_id: "",
  rank_by: "cost",
};

/** How many sessions the page lists. */
export const USAGE_TOP_SESSIONS = 10;

const isRange = (text: string | null): text is UsageRange =>
  text !== null && Object.hasOwn(USAGE_RANGES, text);

/** Reads the state from a query string; unknown or invalid values fall back to defaults. */
export function parseUsageState(search: string): UsageState {
  const q = new URLSearchParams(search);
  const range = q.get("range");
  return {
    range: isRange(range) ? range : DEFAULT_USAGE_STATE.range,
    alert_type: q.get("alert_type") ?? "",
    chain_id: q.get("chain_id") ?? "",
    rank_by: q.get("rank_by") === "tokens" ? "tokens" : "cost",
  };
}

/** The page's query string: only what differs from the defaults. */
export function formatUsageState(state: UsageState): string {
  const q = new URLSearchParams();
  if (state.range !== DEFAULT_USAGE_STATE.range) q.set("range", state.range);
  if (state.alert_type) q.set("alert_type", state.alert_type);
  if (state.chain_id) q.set("chain_id", state.chain_id);
  if (state.rank_by !== DEFAULT_USAGE_STATE.rank_by) q.set("rank_by", state.rank_by);
  return q.toString();
}

/** The API query string: the range as `start_date` that long before `now` (the end is now). */
export function usageQueryString(state: UsageState, now: number = Date.now()): string {
  const q = new URLSearchParams();
  q.set("start_date", new Date(now - USAGE_RANGES[state.range]).toISOString());
  if (state.alert_type) q.set("alert_type", state.alert_type);
  if (state.chain_id) q.set("chain_id", state.chain_id);
  // The default is left to the server: cost, or tokens while cost estimation is off.
  if (state.rank_by !== DEFAULT_USAGE_STATE.rank_by) q.set("rank_by", state.rank_by);
  q.set("top", String(USAGE_TOP_SESSIONS));
  return q.toString();
}

/**
 * The series' query string: the same window and filters as `usageQueryString`, and the
 * browser's time zone (the charts' calendar days); the server defaults to UTC without one.
 */
export function usageSeriesQueryString(
  state: UsageState,
  timeZone: string | undefined,
  now: number = Date.now(),
): string {
  const q = new URLSearchParams();
  q.set("start_date", new Date(now - USAGE_RANGES[state.range]).toISOString());
  if (state.alert_type) q.set("alert_type", state.alert_type);
  if (state.chain_id) q.set("chain_id", state.chain_id);
  if (timeZone) q.set("timezone", timeZone);
  return q.toString();
}
