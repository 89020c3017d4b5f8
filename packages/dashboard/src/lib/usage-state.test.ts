import { describe, expect, it } from "vitest";
import {
  DEFAULT_USAGE_STATE,
  formatUsageState,
  parseUsageState,
  usageQueryString,
  usageSeriesQueryString,
} from "./usage-state.ts";

describe("the Usage page's URL state", () => {
  it("round-trips through the query string, defaults left out", () => {
    expect(formatUsageState(DEFAULT_USAGE_STATE)).toBe("");
    const state = { range: "7d", alert_type: "Kube", chain_id: "k8s", rank_by: "tokens" } as const;
    expect(formatUsageState(state)).toBe("range=7d&alert_type=Kube&chain_id=k8s&rank_by=tokens");
    expect(parseUsageState(`?${formatUsageState(state)}`)).toEqual(state);
  });

  it("falls back to the defaults for unknown values", () => {
    expect(parseUsageState("?range=2y&rank_by=money")).toEqual(DEFAULT_USAGE_STATE);
  });

  it("asks the API for the range ending now", () => {
    const now = Date.parse("2026-03-10T12:00:00.000Z");
    const q = new URLSearchParams(
      usageQueryString({ ...DEFAULT_USAGE_STATE, range: "24h", chain_id: "c" }, now),
    );
    expect(q.get("start_date")).toBe("2026-03-09T12:00:00.000Z");
    expect(q.get("end_date")).toBeNull();
    expect(q.get("chain_id")).toBe("c");
    expect(q.get("alert_type")).toBeNull();
    // The server's default (cost; tokens while estimation is off) unless tokens are chosen.
    expect(q.get("rank_by")).toBeNull();
    const tokens = new URLSearchParams(
      usageQueryString({ ...DEFAULT_USAGE_STATE, rank_by: "tokens" }, now),
    );
    expect(tokens.get("rank_by")).toBe("tokens");
  });

  it("asks for the series with the same window and filters, the browser's zone, no ranking", () => {
    const now = Date.parse("2026-03-10T12:00:00.000Z");
    const state = { range: "7d", alert_type: "Kube", chain_id: "k8s", rank_by: "tokens" } as const;
    const q = new URLSearchParams(usageSeriesQueryString(state, "Asia/Tokyo", now));
    expect([...q]).toEqual([
      ["start_date", "2026-03-03T12:00:00.000Z"],
      ["alert_type", "Kube"],
      ["chain_id", "k8s"],
      ["timezone", "Asia/Tokyo"],
    ]);
    expect(new URLSearchParams(usageSeriesQueryString(state, undefined, now)).has("timezone")).toBe(
      false,
    );
  });
});
