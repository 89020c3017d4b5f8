import {
  type SessionSortField,
  SessionSortFieldSchema,
  type SessionStatus,
  SessionStatusSchema,
} from "@tarsy/contracts";

/** The session list's filters, sort and page: kept in the URL so a link survives a reload. */
export interface ListState {
  status: SessionStatus[];
  alert_type: string;
  chain_id: string;
  search: string;
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
  search: "",
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
  const sortBy = SessionSortFieldSchema.safeParse(q.get("sort_by"));
  return {
    status,
    alert_type: q.get("alert_type") ?? "",
    chain_id: q.get("chain_id") ?? "",
    search: q.get("search") ?? "",
    from: q.get("from") ?? "",
    to: q.get("to") ?? "",
    sort_by: sortBy.success ? sortBy.data : DEFAULT_LIST_STATE.sort_by,
    sort_order: q.get("sort_order") === "asc" ? "asc" : "desc",
    page: positiveInt(q.get("page"), 1, 1_000_000),
    page_size: positiveInt(q.get("page_size"), DEFAULT_LIST_STATE.page_size, 200),
  };
}

/** The query string of the page URL: only what differs from the defaults. */
export function formatListState(state: ListState): string {
  const q = new URLSearchParams();
  if (state.status.length) q.set("status", state.status.join(","));
  for (const key of ["alert_type", "chain_id", "search", "from", "to"] as const) {
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
 * not sent); the time range is given as local datetime text and sent as ISO timestamps.
 */
export function listQueryString(state: ListState): string {
  const q = new URLSearchParams();
  if (state.status.length) q.set("status", state.status.join(","));
  if (state.alert_type) q.set("alert_type", state.alert_type);
  if (state.chain_id) q.set("chain_id", state.chain_id);
  if (state.search.trim().length >= 3) q.set("search", state.search.trim());
  for (const key of ["from", "to"] as const) {
    const date = state[key] ? new Date(state[key]) : null;
    if (date && !Number.isNaN(date.getTime())) q.set(key, date.toISOString());
  }
  q.set("sort_by", state.sort_by);
  q.set("sort_order", state.sort_order);
  q.set("page", String(state.page));
  q.set("page_size", String(state.page_size));
  return q.toString();
}
