import {
  type MemoryCategory,
  MemoryCategorySchema,
  type MemoryValence,
  MemoryValenceSchema,
} from "@tarsy/contracts";

/** The Memories page's filters and page, kept in the URL (`/memories?category=semantic`). */

export type MemoryStateFilter = "all" | "live" | "deprecated";

export interface MemoryState {
  category: MemoryCategory | "";
  valence: MemoryValence | "";
  state: MemoryStateFilter;
  /** 1-based. */
  page: number;
}

export const DEFAULT_MEMORY_STATE: MemoryState = {
  category: "",
  valence: "",
  state: "all",
  page: 1,
};

/** Memories per page. */
export const MEMORY_PAGE_SIZE = 20;

/** Reads the state from a query string; unknown or invalid values fall back to defaults. */
export function parseMemoryState(search: string): MemoryState {
  const q = new URLSearchParams(search);
  const category = MemoryCategorySchema.safeParse(q.get("category"));
  const valence = MemoryValenceSchema.safeParse(q.get("valence"));
  const deprecated = q.get("deprecated");
  const page = Number(q.get("page"));
  return {
    category: category.success ? category.data : "",
    valence: valence.success ? valence.data : "",
    state: deprecated === "true" ? "deprecated" : deprecated === "false" ? "live" : "all",
    page: Number.isInteger(page) && page > 1 ? page : 1,
  };
}

/** The page's query string: only what differs from the defaults (the API's names). */
export function formatMemoryState(state: MemoryState): string {
  const q = new URLSearchParams();
  if (state.category) q.set("category", state.category);
  if (state.valence) q.set("valence", state.valence);
  if (state.state !== "all") q.set("deprecated", String(state.state === "deprecated"));
  if (state.page > 1) q.set("page", String(state.page));
  return q.toString();
}

/** The API query string of `GET /api/v1/memories`. */
export function memoryQueryString(state: MemoryState): string {
  const q = new URLSearchParams(formatMemoryState(state));
  q.set("page_size", String(MEMORY_PAGE_SIZE));
  return q.toString();
}
