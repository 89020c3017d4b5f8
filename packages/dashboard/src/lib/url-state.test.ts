import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIST_STATE,
  formatListState,
  listQueryString,
  parseListState,
} from "./url-state.ts";

describe("list URL state", () => {
  it("round-trips filters through the page URL", () => {
    const state = {
      ...DEFAULT_LIST_STATE,
      status: ["completed" as const, "failed" as const],
      search: "disk",
      alert_type: "kubernetes",
      project: "payments",
      sort_by: "status" as const,
      sort_order: "asc" as const,
      page: 3,
    };
    const text = formatListState(state);
    expect(text).toBe(
      "status=completed%2Cfailed&alert_type=kubernetes&project=payments&search=disk&sort_by=status&sort_order=asc&page=3",
    );
    expect(parseListState(`?${text}`)).toEqual(state);
    expect(new URLSearchParams(listQueryString(state)).get("project")).toBe("payments");
    expect(formatListState(DEFAULT_LIST_STATE)).toBe("");
  });

  it("keeps the label filter in the URL and sends it to the API", () => {
    const state = { ...DEFAULT_LIST_STATE, label: "noise" };
    expect(formatListState(state)).toBe("label=noise");
    expect(parseListState("?label=noise")).toEqual(state);
    expect(new URLSearchParams(listQueryString(state)).get("label")).toBe("noise");
  });

  it("keeps the review filters in the URL and sends them to the API", () => {
    const state = parseListState("?review_status=needs_review,bogus,in_progress&assignee=alice");
    expect(state).toMatchObject({
      review_status: ["needs_review", "in_progress"],
      assignee: "alice",
    });
    expect(formatListState(state)).toBe("review_status=needs_review%2Cin_progress&assignee=alice");
    const api = new URLSearchParams(listQueryString(state));
    expect(api.get("review_status")).toBe("needs_review,in_progress");
    expect(api.get("assignee")).toBe("alice");
  });

  it("ignores invalid values and keeps short searches out of the API query", () => {
    const state = parseListState(
      "?status=bogus,pending&sort_by=nope&page=-2&page_size=9999&search=ab",
    );
    expect(state).toMatchObject({
      status: ["pending"],
      sort_by: "created_at",
      page: 1,
      page_size: 1000,
    });
    const api = new URLSearchParams(listQueryString(state));
    expect(api.get("search")).toBeNull();
    expect(api.get("status")).toBe("pending");
    const ranged = new URLSearchParams(
      listQueryString({ ...state, from: "2026-11-01T00:00:00Z", to: "garbage" }),
    );
    expect(ranged.get("from")).toBe("2026-11-01T00:00:00.000Z");
    expect(ranged.get("to")).toBeNull();
  });

  it("keeps a time-range preset relative: the API gets the time that long before now", () => {
    const state = parseListState("?range=24h&from=2026-01-01T00:00");
    expect(state).toMatchObject({ range: "24h", from: "", to: "" });
    expect(formatListState(state)).toBe("range=24h");
    const now = Date.parse("2026-11-25T12:00:00Z");
    const api = new URLSearchParams(listQueryString(state, now));
    expect(api.get("from")).toBe("2026-11-24T12:00:00.000Z");
    expect(api.get("to")).toBeNull();
    expect(parseListState("?range=2w&from=2026-01-01T00:00")).toMatchObject({
      range: "",
      from: "2026-01-01T00:00",
    });
  });
});
