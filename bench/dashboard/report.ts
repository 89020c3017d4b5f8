import { availableParallelism } from "node:os";
import { MIN_FRAMES, QUIET_MS, VIEWPORT } from "./measure.ts";
import type { DashboardBenchResult, SessionFigures } from "./run.ts";
import { FRAME_BUDGET_MS, type FrameStats } from "./stats.ts";

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const ms = (n: number | null) => (n === null ? "never" : `${int(n)} ms`);
const mb = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1e6).toFixed(1)} MB` : "–");
const frame = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "–");
const pct = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)}%` : "–");

type Row = [label: string, ...values: string[]];

const frameRows = (pick: (s: SessionFigures) => FrameStats, all: SessionFigures[]): Row[] => [
  ["  frames measured", ...all.map((s) => int(pick(s).frames))],
  [
    "  frame ms p50 / p95 / p99",
    ...all.map((s) => {
      const f = pick(s);
      return `${frame(f.p50)} / ${frame(f.p95)} / ${frame(f.p99)}`;
    }),
  ],
  [
    `  over ${frame(FRAME_BUDGET_MS - 1)} ms / 60 Hz frames dropped`,
    ...all.map((s) => `${pct(pick(s).overBudgetPct)} / ${int(pick(s).dropped)}`),
  ],
  ["  longest frame", ...all.map((s) => `${frame(pick(s).max)} ms`)],
];

function table(header: Row, rows: Row[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join("   ")
        .trimEnd(),
    )
    .join("\n");
}

/** The benchmark's figures as the tables it prints. */
export function formatReport(result: DashboardBenchResult): string {
  const { options, large, baseline, list } = result;
  const sessions = [large, baseline];
  const sessionHeader: Row = ["Session page", ...sessions.map((s) => `${int(s.events)} events`)];
  const sessionRows: Row[] = [
    ["tool results of 100 KB", ...sessions.map((s) => int(s.bigResults))],
    [
      "timeline fetch (REST)",
      ...sessions.map((s) => `${ms(s.open.fetchMs)}, ${mb(s.open.fetchBytes)}`),
    ],
    ["first item in the DOM", ...sessions.map((s) => ms(s.open.firstSeenMs))],
    ["time to interactive", ...sessions.map((s) => ms(s.open.interactiveMs))],
    ["long tasks after the first item", ...sessions.map((s) => int(s.open.longTasks))],
    ["JS heap after open (after GC)", ...sessions.map((s) => mb(s.open.heapBytes))],
    ["DOM elements after open", ...sessions.map((s) => int(s.open.domElements))],
    ["timeline item nodes after open", ...sessions.map((s) => int(s.open.watchedNodes))],
    [
      `scroll ${options.seconds} s at ${int(options.scrollPxPerSecond)} px/s`,
      ...sessions.map((s) => `${int(s.scroll.distancePx)} px, ${int(s.scroll.turns)} turns`),
    ],
    ...frameRows((s) => s.scroll, sessions),
    ["  item nodes at most", ...sessions.map((s) => int(s.scroll.maxWatchedNodes))],
    ["scroll to the last item", ...sessions.map((s) => ms(s.lastItemMs))],
    [
      `live stream ${options.seconds} s (events, chunks)`,
      ...sessions.map((s) => `${int(s.stream.events)}, ${int(s.stream.chunks)}`),
    ],
    ...frameRows((s) => s.stream.frames, sessions),
    ["  followed to the last event", ...sessions.map((s) => (s.stream.followed ? "yes" : "no"))],
    ["JS heap after streaming (after GC)", ...sessions.map((s) => mb(s.stream.heapBytes))],
    [
      "DOM elements / item nodes after",
      ...sessions.map((s) => `${int(s.stream.domElements)} / ${int(s.stream.itemNodes)}`),
    ],
  ];
  const listHeader: Row = ["Session list", `${int(list.stored)} stored`];
  const listRows: Row[] = [
    ["sessions the pager counts", list.total === null ? "–" : int(list.total)],
    [
      `rows on the page (page size ${list.pageSize}, the largest)`,
      list.pageRows === null ? "–" : int(list.pageRows),
    ],
    ["list fetch (REST)", `${ms(list.open.fetchMs)}, ${mb(list.open.fetchBytes)}`],
    ["first row in the DOM", ms(list.open.firstSeenMs)],
    ["time to interactive", ms(list.open.interactiveMs)],
    ["JS heap after open (after GC)", mb(list.open.heapBytes)],
    ["row nodes after open", int(list.open.watchedNodes)],
    [
      `scroll ${options.seconds} s at ${int(options.scrollPxPerSecond)} px/s`,
      `${int(list.scroll.distancePx)} px, ${int(list.scroll.turns)} turns`,
    ],
    ["  frames measured", int(list.scroll.frames)],
    [
      "  frame ms p50 / p95 / p99",
      `${frame(list.scroll.p50)} / ${frame(list.scroll.p95)} / ${frame(list.scroll.p99)}`,
    ],
    [
      `  over ${frame(FRAME_BUDGET_MS - 1)} ms / 60 Hz frames dropped`,
      `${pct(list.scroll.overBudgetPct)} / ${int(list.scroll.dropped)}`,
    ],
    ["  longest frame", `${frame(list.scroll.max)} ms`],
    ["  row nodes at most", int(list.scroll.maxWatchedNodes)],
  ];
  return [
    `TARSy dashboard benchmark: Chromium ${result.chromium} (headless, software rendering), ` +
      `${VIEWPORT.width}×${VIEWPORT.height} window`,
    `${availableParallelism()} CPUs, 1-minute load average ${result.load.before.toFixed(1)} at the ` +
      `start and ${result.load.after.toFixed(1)} at the end; open figures are medians of ` +
      `${options.opens} cold open(s)`,
    "",
    table(sessionHeader, sessionRows),
    "",
    table(listHeader, listRows),
    "",
    `Time to interactive: navigation start → the end of the last long task (≥ 50 ms) before ${QUIET_MS} ms`,
    "without one, counted from the first item in the DOM. Frames: requestAnimationFrame deltas; a frame",
    `is over budget past ${frame(FRAME_BUDGET_MS - 1)} ms + 1 ms of timer jitter; a delta of n frame intervals dropped n − 1;`,
    `each scroll and stream measures at least ${MIN_FRAMES} frames, however long they take.`,
  ].join("\n");
}
