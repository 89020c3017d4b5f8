import {
  type ReviewStatus,
  ReviewStatusSchema,
  type SessionSortField,
  SessionSortFieldSchema,
  type SessionStatus,
  SessionStatusSchema,
} from "@tarsy/contracts";

/** Relative time ranges: a link with `range=24h` means "the last 24 hours" whenever opened. */
export const TIME_RANGE_PRESETS = {
  "1h": 3_600_000,
  "24h": 86_400_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
} as const;
export type TimeRangePreset = keyof typeof TIME_RANGE_PRESETS;
const isPreset = (text: string | null): text is TimeRangePreset =>
  text !== null && Object.hasOwn(TIME_RANGE_PRESETS, text);

/** The session list's filters, sort and page: kept in the URL so a link survives a reload. */
export interface ListState {
  status: SessionStatus[];
  alert_type: string;
  chain_id: string;
  /** One project's sessions (empty: every project the caller may see). */
  project: string;
  /** Review states (empty: any). */
  review_status: ReviewStatus[];
  /** One reviewer's sessions (empty: anyone's). */
  assignee: string;
  /** Sessions labelled with this name (empty: any). */
  label: string;
  search: string;
  /** A relative range; when set, `from`/`to` (a custom range) are not used. */
  range: TimeRangePreset | "";
  from: string;
  to: string;
  sort_by: SessionSortField;
  sort_order: "asc" | "desc";
  page: number;
  page_size: number;
}

export const DEFAULT_LIST_STATE: ListState = {
  status: [],
  alert_type: "",
  chain_id: "",
  project: "",
  review_status: [],
  assignee: "",
  label: "",
  search: "",
  range: "",
  from: "",
  to: "",
  sort_by: "created_at",
  sort_order: "desc",
  page: 1,
  page_size: 25,
};

const positiveInt = (text: string | null, fallback: number, max: number) => {
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;
};

/** Reads the list state from a query string; unknown or invalid values fall back to defaults. */
export function parseListState(search: string): ListState {
  const q = new URLSearchParams(search);
  const status = (q.get("status") ?? "")
    .split(",")
    .map((s) => SessionStatusSchema.safeParse(s.trim()))
    .flatMap((r) => (r.success ? [r.data] : []));
  const reviewStatus = (q.get("review_status") ?? "")
    .split(",")
    .map((s) => ReviewStatusSchema.safeParse(s.trim()))
    .flatMap((r) => (r.success ? [r.data] : []));
  const sortBy = SessionSortFieldSchema.safeParse(q.get("sort_by"));
  const range = q.get("range");
  return {
    status,
    alert_type: q.get("alert_type") ?? "",
    chain_id: q.get("chain_id") ?? "",
    project: q.get("project") ?? "",
    review_status: reviewStatus,
    assignee: q.get("assignee") ?? "",
    label: q.get("label") ?? "",
    search: q.get("search") ?? "",
    range: isPreset(range) ? range : "",
    from: isPreset(range) ? "" : (q.get("from") ?? ""),
    to: isPreset(range) ? "" : (q.get("to") ?? ""),
    sort_by: sortBy.success ? sortBy.data : DEFAULT_LIST_STATE.sort_by,
    sort_order: q.get("sort_order") === "asc" ? "asc" : "desc",
    page: positiveInt(q.get("page"), 1, 1_000_000),
    page_size: positiveInt(q.get("page_size"), DEFAULT_LIST_STATE.page_size, 1000),
  };
}

/** The query string of the page URL: only what differs from the defaults. */
export function formatListState(state: ListState): string {
  const q = new URLSearchParams();
  if (state.status.length) q.set("status", state.status.join(","));
  if (state.review_status.length) q.set("review_status", state.review_status.join(","));
  for (const key of [
    "alert_type",
    "chain_id",
    "project",
    "assignee",
    "label",
    "search",
    "range",
    "from",
    "to",
  ] as const) {
    if (state[key]) q.set(key, state[key]);
  }
  if (state.sort_by !== DEFAULT_LIST_STATE.sort_by) q.set("sort_by", state.sort_by);
  if (state.sort_order !== DEFAULT_LIST_STATE.sort_order) q.set("sort_order", state.sort_order);
  if (state.page !== 1) q.set("page", String(state.page));
  if (state.page_size !== DEFAULT_LIST_STATE.page_size) q.set("page_size", String(state.page_size));
  return q.toString();
}

/**
 * The API query string for the list. The search needs at least 3 characters (shorter text is
 * not sent); a custom time range is given as local datetime text and sent as ISO timestamps, a
 * preset is sent as the timestamp that long before `now`.
 */
export function listQueryString(state: ListState, now: number = Date.now()): string {
  const q = new URLSearchParams();
  if (state.status.length) q.set("status", state.status.join(","));
  if (state.alert_type) q.set("alert_type", state.alert_type);
  if (state.chain_id) q.set("chain_id", state.chain_id);
  if (state.project) q.set("project", state.project);
  if (state.review_status.length) q.set("review_status", state.review_status.join(","));
  if (state.assignee) q.set("assignee", state.assignee);
  if (state.label) q.set("label", state.label);
  if (state.search.trim().length >= 3) q.set("search", state.search.trim());
  if (state.range) {
    q.set("from", new Date(now - TIME_RANGE_PRESETS[state.range]).toISOString());
  } else {
    for (const key of ["from", "to"] as const) {
      const date = state[key] ? new Date(state[key]) : null;
      if (date && !Number.isNaN(date.getTime())) q.set(key, date.toISOString());
    }
  }
  q.set("sort_by", state.sort_by);
  q.set("sort_order", state.sort_order);
  q.set("page", String(state.page));
  q.set("page_size", String(state.page_size));
  return q.toString();
}
