import { beforeAll, describe, expect, it } from "vitest";
import { MIN_FRAMES } from "../../bench/dashboard/measure.ts";
import { formatReport } from "../../bench/dashboard/report.ts";
import {
  type DashboardBenchResult,
  DEFAULT_OPTIONS,
  runDashboardBenchmark,
} from "../../bench/dashboard/run.ts";
import type { FrameStats } from "../../bench/dashboard/stats.ts";

/**
 * The dashboard benchmark (`pnpm --filter @tarsy/bench dashboard`) run small, through the same
 * code: a session of 500 events beside the 50-event baseline, and a list over 100 stored
 * sessions. It asserts what holds on any machine: the pages open, the last item is reachable,
 * the virtualised lists keep a bounded number of nodes, a live stream reaches the page and is
 * followed, and every figure was measured. How fast is the benchmark's to print, not this
 * test's to judge (timing thresholds would fail on a busy machine).
 */
describe("the dashboard benchmark, small", () => {
  const EVENTS = 500;
  const LIST = 100;
  let result: DashboardBenchResult;

  beforeAll(async () => {
    result = await runDashboardBenchmark({
      ...DEFAULT_OPTIONS,
      events: EVENTS,
      list: LIST,
      seconds: 2,
      opens: 1,
    });
  }, 600_000); // minutes on a busy 2-core machine

  const measured = (f: FrameStats) => {
    expect(f.frames).toBeGreaterThanOrEqual(MIN_FRAMES);
    for (const value of [f.p50, f.p95, f.p99, f.max]) {
      expect(Number.isFinite(value)).toBe(true);
      expect(value).toBeGreaterThan(0);
    }
    expect(f.p50).toBeLessThanOrEqual(f.p95);
    expect(f.p95).toBeLessThanOrEqual(f.p99);
    expect(f.overBudgetPct).toBeGreaterThanOrEqual(0);
    expect(f.dropped).toBeGreaterThanOrEqual(0);
  };

  it("opens both session pages: the first items rendered, then the main thread idle", () => {
    const { large, baseline } = result;
    expect(large.events).toBe(EVENTS);
    expect(baseline.events).toBe(DEFAULT_OPTIONS.baseline);
    expect(large.bigResults).toBe(5);
    for (const s of [large, baseline]) {
      expect(s.open.firstSeenMs).toBeGreaterThan(0);
      expect(s.open.interactiveMs).toBeGreaterThanOrEqual(s.open.firstSeenMs);
      expect(s.open.watchedNodes).toBeGreaterThan(0);
      expect(s.open.heapBytes).toBeGreaterThan(0);
    }
    // The whole timeline comes over REST: five results of 100 KB are in the large one.
    expect(large.open.fetchBytes).toBeGreaterThan(500_000);
    expect(large.open.fetchBytes).toBeGreaterThan(baseline.open.fetchBytes);
  });

  it("keeps the timeline virtualised, and its last item reachable", () => {
    const { large, baseline } = result;
    expect(large.lastItemMs).not.toBeNull();
    expect(baseline.lastItemMs).not.toBeNull();
    // Ten times the events, not ten times the DOM: only a window of the list is rendered.
    expect(large.scroll.maxWatchedNodes).toBeLessThan(200);
    expect(large.open.domElements).toBeLessThan(2 * baseline.open.domElements);
    expect(large.stream.itemNodes).toBeLessThan(200);
    expect(large.scroll.distancePx).toBeGreaterThan(0);
    measured(large.scroll);
    measured(baseline.scroll);
  });

  it("follows a live stream to its last event, both sizes", () => {
    for (const s of [result.large, result.baseline]) {
      expect(s.stream.events).toBeGreaterThanOrEqual(3);
      expect(s.stream.chunks).toBeGreaterThan(0);
      expect(s.stream.followed).toBe(true);
      expect(s.stream.heapBytes).toBeGreaterThan(0);
      measured(s.stream.frames);
    }
  });

  it("opens the session list with its rows, virtualised", () => {
    const { list } = result;
    // The history and the two sessions above.
    expect(list.total).toBe(LIST + 2);
    expect(list.pageRows).toBe(LIST + 2);
    expect(list.open.firstSeenMs).toBeGreaterThan(0);
    expect(list.open.watchedNodes).toBeGreaterThan(0);
    expect(list.scroll.maxWatchedNodes).toBeLessThan(LIST);
    measured(list.scroll);
  });

  it("prints every figure", () => {
    const report = formatReport(result);
    expect(report).toContain(`${EVENTS} events`);
    expect(report).toContain(`${DEFAULT_OPTIONS.baseline} events`);
    expect(report).toContain(`${LIST} stored`);
    expect(report).toMatch(/time to interactive/);
    // "–" stands for a figure not measured, "never" for an item not reached.
    expect(report).not.toMatch(/NaN|–|never/);
  });
});
