import { loadavg } from "node:os";
import type { AlertTypesResponse } from "@tarsy/contracts";
import { createDb, type Db } from "@tarsy/db";
import type { Browser } from "playwright-core";
import { type ForgedSession, forgeHistory, forgeSession } from "./forge.ts";
import {
  framesDuring,
  heapAfterGc,
  measureScroll,
  type OpenedPage,
  type OpenFigures,
  openPage,
  reachEnd,
  type ScrollFigures,
  waitShown,
} from "./measure.ts";
import { domCounts } from "./page-probes.ts";
import { type BenchRig, startBenchRig } from "./rig.ts";
import { type FrameStats, median } from "./stats.ts";
import { streamInvestigation } from "./stream.ts";

export interface DashboardBenchOptions {
  /** Timeline events of the large session. */
  events: number;
  /** Timeline events of the baseline session, measured in the same run. */
  baseline: number;
  /** Historical sessions stored for the list page. */
  list: number;
  /** Length of each scroll and of each live stream. */
  seconds: number;
  /** Times each page is opened cold; the open figures are the medians. */
  opens: number;
  scrollPxPerSecond: number;
  /** Progress lines (the figures are in the result). */
  log?: (line: string) => void;
  /** Aborting closes the browser and cleans up (the run then fails). */
  signal?: AbortSignal;
}

export const DEFAULT_OPTIONS: Omit<DashboardBenchOptions, "log" | "signal"> = {
  events: 5_000,
  baseline: 50,
  list: 1_000,
  seconds: 10,
  opens: 3,
  scrollPxPerSecond: 6_000,
};

/** The list's largest page (the API's `page_size` maximum). */
export const LIST_PAGE_SIZE = 1_000;
/** One tool result in this many streamed turns is 100 KB. */
const STREAM_BIG_RESULT_EVERY = 3;
const CHUNK_INTERVAL_MS = 10;
const ITEM = "[data-event-id]";
const ROW = "[data-session-id]";

export interface StreamFigures {
  frames: FrameStats;
  /** Timeline events and token chunks published while the page watched. */
  events: number;
  chunks: number;
  /** The last streamed event reached the page with its final content, in the window. */
  followed: boolean;
  heapBytes: number;
  domElements: number;
  itemNodes: number;
}

export interface SessionFigures {
  events: number;
  bigResults: number;
  open: OpenFigures;
  scroll: ScrollFigures;
  /** Scrolling to the end until the last item was in the window (null: it never was). */
  lastItemMs: number | null;
  stream: StreamFigures;
}

export interface ListFigures {
  stored: number;
  /** The page size asked for (`page_size`, the API's largest). */
  pageSize: number;
  /** Rows of the page and sessions in all, as the pager shows them (null: not shown). */
  pageRows: number | null;
  total: number | null;
  open: OpenFigures;
  scroll: ScrollFigures;
}

export interface DashboardBenchResult {
  options: Omit<DashboardBenchOptions, "log" | "signal">;
  chromium: string;
  /** The machine's 1-minute load average when the run started and ended (others' work too). */
  load: { before: number; after: number };
  large: SessionFigures;
  baseline: SessionFigures;
  list: ListFigures;
}

/** The medians of several opens of one page. */
function medianOpen(all: OpenFigures[]): OpenFigures {
  const pick = (key: keyof OpenFigures) => median(all.map((f) => f[key]));
  return {
    firstSeenMs: pick("firstSeenMs"),
    interactiveMs: pick("interactiveMs"),
    longTasks: pick("longTasks"),
    fetchMs: pick("fetchMs"),
    fetchBytes: pick("fetchBytes"),
    heapBytes: pick("heapBytes"),
    domElements: pick("domElements"),
    watchedNodes: pick("watchedNodes"),
  };
}

/** Opens the page `opens` times, each cold; keeps the last one open. */
async function openRepeatedly(
  browser: Browser,
  url: string,
  watch: { selector: string; fetchPart: string },
  opens: number,
): Promise<{ opened: OpenedPage; figures: OpenFigures }> {
  const all: OpenFigures[] = [];
  for (let i = 1; ; i++) {
    const { opened, figures } = await openPage(browser, url, watch);
    all.push(figures);
    if (i >= opens) return { opened, figures: medianOpen(all) };
    await opened.close();
  }
}

function assertNoPageErrors(opened: OpenedPage, where: string): void {
  if (opened.errors.length) {
    throw new Error(`errors in the page (${where}): ${opened.errors.join("; ")}`);
  }
}

async function measureSession(
  rig: BenchRig,
  session: ForgedSession,
  options: DashboardBenchOptions,
): Promise<SessionFigures> {
  const log = options.log ?? (() => undefined);
  const events = session.eventIds.length;
  const url = rig.pageUrl(`/sessions/${session.id}`);
  log(`session of ${events} events: opening ${options.opens} time(s)`);
  const { opened, figures: open } = await openRepeatedly(
    rig.browser,
    url,
    { selector: ITEM, fetchPart: "/timeline" },
    options.opens,
  );
  try {
    const { page, cdp } = opened;
    log(`session of ${events} events: scrolling for ${options.seconds} s`);
    const scroll = await measureScroll(page, {
      seconds: options.seconds,
      pxPerSecond: options.scrollPxPerSecond,
      selector: ITEM,
    });
    const lastItemMs = await reachEnd(page, `event-${session.eventIds.at(-1)}`);
    log(`session of ${events} events: streaming for ${options.seconds} s`);
    const { frames, result } = await framesDuring(page, async () => {
      const streamed = await streamInvestigation(
        rig.bus,
        {
          sessionId: session.id,
          firstSequence: events + 1,
          seconds: options.seconds,
          chunkIntervalMs: CHUNK_INTERVAL_MS,
          bigResultEvery: STREAM_BIG_RESULT_EVERY,
        },
        async (first) => {
          // The page follows the output: the new event comes into the window.
          if (!(await waitShown(page, { id: `event-${first.eventId}`, text: "" }))) {
            throw new Error("the first streamed event did not come into the window");
          }
        },
      );
      const followed = await waitShown(page, {
        id: `event-${streamed.last.eventId}`,
        text: streamed.last.content.slice(-40),
      });
      return { ...streamed, followed };
    });
    const heapBytes = await heapAfterGc(cdp);
    const counts = await page.evaluate(domCounts, ITEM);
    assertNoPageErrors(opened, `session of ${events} events`);
    return {
      events,
      bigResults: session.bigResults,
      open,
      scroll,
      lastItemMs,
      stream: {
        frames,
        events: result.events,
        chunks: result.chunks,
        followed: result.followed,
        heapBytes,
        domElements: counts.elements,
        itemNodes: counts.matching,
      },
    };
  } finally {
    await opened.close();
  }
}

async function measureList(
  rig: BenchRig,
  stored: number,
  options: DashboardBenchOptions,
): Promise<ListFigures> {
  const log = options.log ?? (() => undefined);
  const url = rig.pageUrl("/", { page_size: String(LIST_PAGE_SIZE) });
  log(`session list (${stored} stored): opening ${options.opens} time(s)`);
  const { opened, figures: open } = await openRepeatedly(
    rig.browser,
    url,
    { selector: ROW, fetchPart: "/sessions?" },
    options.opens,
  );
  try {
    const { page } = opened;
    // "1–1000 of 1,002": the rows of this page and every session stored.
    const shown = /([\d,]+)\s*[–-]\s*([\d,]+)\s+of\s+([\d,]+)/;
    const pager = await page
      .getByRole("navigation", { name: "Pagination" })
      .getByText(shown)
      .textContent();
    const [, from, to, total] = shown.exec(pager ?? "") ?? [];
    const count = (text: string | undefined) =>
      text === undefined ? null : Number(text.replaceAll(",", ""));
    log(`session list: scrolling for ${options.seconds} s`);
    const scroll = await measureScroll(page, {
      seconds: options.seconds,
      pxPerSecond: options.scrollPxPerSecond,
      selector: ROW,
    });
    assertNoPageErrors(opened, "session list");
    const first = count(from);
    const last = count(to);
    return {
      stored,
      pageSize: LIST_PAGE_SIZE,
      pageRows: first === null || last === null ? null : last - first + 1,
      total: count(total),
      open,
      scroll,
    };
  } finally {
    await opened.close();
  }
}

/**
 * The dashboard benchmark: builds the dashboard, starts ingest-api (serving it) and
 * stream-relay on a database and NATS prefix of their own, forges a large session, a baseline
 * session and the list's history, and measures each page in Chromium. Everything started or
 * stored is removed afterwards, also on failure.
 */
export async function runDashboardBenchmark(
  options: DashboardBenchOptions,
): Promise<DashboardBenchResult> {
  const log = options.log ?? (() => undefined);
  const loadBefore = loadavg()[0] ?? Number.NaN;
  log("building the dashboard; starting ingest-api and stream-relay");
  const rig = await startBenchRig();
  const abort = () => void rig.browser.close();
  options.signal?.addEventListener("abort", abort, { once: true });
  let db: Db | undefined;
  try {
    options.signal?.throwIfAborted(); // while the rig started
    db = createDb({ url: rig.databaseUrl });
    const types = await fetch(`${rig.stack.apiUrl}/api/v1/system/alert-types`);
    const { chains } = (await types.json()) as AlertTypesResponse;
    const chain = chains[0];
    const alertType = chain?.alert_types[0];
    if (!chain || !alertType) throw new Error("the configuration has no chain");
    const forge = { chainId: chain.id, alertType };

    log(
      `storing sessions of ${options.events} and ${options.baseline} events, ` +
        `${options.list} in the history`,
    );
    const large = await forgeSession(db.prisma, {
      ...forge,
      events: options.events,
      status: "in_progress",
    });
    const baseline = await forgeSession(db.prisma, {
      ...forge,
      events: options.baseline,
      status: "in_progress",
    });
    await forgeHistory(db.prisma, { ...forge, count: options.list });

    // A first visit (not counted): the server's and the browser's first-time costs.
    log("warming up");
    const warm = await openPage(rig.browser, rig.pageUrl(`/sessions/${baseline.id}`), {
      selector: ITEM,
      fetchPart: "/timeline",
    });
    await warm.opened.close();

    const baselineFigures = await measureSession(rig, baseline, options);
    const largeFigures = await measureSession(rig, large, options);
    const list = await measureList(rig, options.list, options);
    const { log: _log, signal: _signal, ...plain } = options;
    return {
      options: plain,
      chromium: rig.browser.version(),
      load: { before: loadBefore, after: loadavg()[0] ?? Number.NaN },
      large: largeFigures,
      baseline: baselineFigures,
      list,
    };
  } catch (err) {
    if (options.signal?.aborted) throw new Error("the benchmark was stopped", { cause: err });
    const tail = rig.logs.slice(-40).join("\n");
    throw new Error(
      `dashboard benchmark failed: ${(err as Error).message}\nlast service log lines:\n${tail}`,
      { cause: err },
    );
  } finally {
    options.signal?.removeEventListener("abort", abort);
    log("cleaning up");
    await db?.close().catch(() => undefined);
    await rig.stop();
  }
}
