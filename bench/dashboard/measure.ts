import {
  type Browser,
  type BrowserContext,
  type CDPSession,
  errors,
  type Page,
} from "playwright-core";
import {
  domCounts,
  installProbes,
  interactive,
  resourceTiming,
  scrollAround,
  scrollToEndAndFind,
  seen,
  shownInWindow,
  startFrames,
  stopFrames,
} from "./page-probes.ts";
import { type FrameStats, frameStats } from "./stats.ts";

/** A window the size of a laptop screen. */
export const VIEWPORT = { width: 1400, height: 900 };
/** The quiet window of the time-to-interactive definition (see `interactive`). */
export const QUIET_MS = 500;
const OPEN_TIMEOUT_MS = 120_000;
/** Fewest frames a scroll or a recording measures, however long they take. */
export const MIN_FRAMES = 10;

/** A freshly opened page with the probes installed, a CDP session and its page errors. */
export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  errors: string[];
  close(): Promise<void>;
}

export interface OpenFigures {
  /** Navigation start → the first watched element in the DOM. */
  firstSeenMs: number;
  /** Navigation start → the main thread idle after it (see `interactive`). */
  interactiveMs: number;
  longTasks: number;
  /** The main REST call of the page: its duration and body size. */
  fetchMs: number;
  fetchBytes: number;
  /** `Runtime.getHeapUsage` after `HeapProfiler.collectGarbage`. */
  heapBytes: number;
  domElements: number;
  /** Elements matching the watched selector (timeline items, table rows). */
  watchedNodes: number;
}

/**
 * Opens `url` in a new browser context (cold cache, like a new visitor), waits until it is
 * interactive, and takes the figures of the opened page.
 */
export async function openPage(
  browser: Browser,
  url: string,
  watch: { selector: string; fetchPart: string },
): Promise<{ opened: OpenedPage; figures: OpenFigures }> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const errors: string[] = [];
  try {
    await context.addInitScript(installProbes, watch.selector);
    const page = await context.newPage();
    page.on("pageerror", (err) => errors.push(err.message));
    const cdp = await context.newCDPSession(page);
    await page.goto(url);
    await page.waitForFunction(seen, undefined, { timeout: OPEN_TIMEOUT_MS, polling: 50 });
    const tti = await page.evaluate(interactive, { quietMs: QUIET_MS, timeoutMs: OPEN_TIMEOUT_MS });
    const fetched = await page.evaluate(resourceTiming, watch.fetchPart);
    const counts = await page.evaluate(domCounts, watch.selector);
    const figures: OpenFigures = {
      ...tti,
      fetchMs: fetched?.ms ?? Number.NaN,
      fetchBytes: fetched?.bytes ?? Number.NaN,
      heapBytes: await heapAfterGc(cdp),
      domElements: counts.elements,
      watchedNodes: counts.matching,
    };
    return {
      opened: { context, page, cdp, errors, close: () => context.close() },
      figures,
    };
  } catch (err) {
    await context.close();
    throw err;
  }
}

/** Bytes of JS heap in use after a full garbage collection. */
export async function heapAfterGc(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  return usedSize;
}

export interface ScrollFigures extends FrameStats {
  distancePx: number;
  /** Times the scroll reached the top or bottom and turned. */
  turns: number;
  /** Most elements matching the selector seen at once while scrolling. */
  maxWatchedNodes: number;
}

/** Frame times while the window scrolls down and up at `pxPerSecond` for `seconds`. */
export async function measureScroll(
  page: Page,
  options: { seconds: number; pxPerSecond: number; selector: string },
): Promise<ScrollFigures> {
  const run = await page.evaluate(scrollAround, { ...options, minFrames: MIN_FRAMES });
  return {
    ...frameStats(run.deltas),
    distancePx: run.distancePx,
    turns: run.turns,
    maxWatchedNodes: run.maxMatching,
  };
}

/**
 * Scrolls to the bottom until the element `#<id>` is in the window (rows measure as they
 * render, so the end moves); how long that took, or null if it did not within `timeoutMs`.
 */
export async function reachEnd(page: Page, id: string, timeoutMs = 30_000): Promise<number | null> {
  const started = Date.now();
  try {
    await page.waitForFunction(scrollToEndAndFind, id, { timeout: timeoutMs, polling: 100 });
    return Date.now() - started;
  } catch (err) {
    if (err instanceof errors.TimeoutError) return null;
    throw err;
  }
}

/** Runs `work` while recording frames; the frame figures and what `work` returned. */
export async function framesDuring<T>(
  page: Page,
  work: () => Promise<T>,
): Promise<{ frames: FrameStats; result: T }> {
  await page.evaluate(startFrames);
  try {
    const result = await work();
    return { frames: frameStats(await page.evaluate(stopFrames, MIN_FRAMES)), result };
  } catch (err) {
    // The loop would otherwise run until the page closes.
    await page.evaluate(stopFrames, 0).catch(() => undefined);
    throw err;
  }
}

/** Waits until `#<id>` is in the window holding `text`; false when it is not within the time. */
export async function waitShown(
  page: Page,
  args: { id: string; text: string },
  timeoutMs = 30_000,
): Promise<boolean> {
  try {
    await page.waitForFunction(shownInWindow, args, { timeout: timeoutMs, polling: 50 });
    return true;
  } catch (err) {
    if (err instanceof errors.TimeoutError) return false;
    throw err;
  }
}
