/**
 * Code that runs inside the page (handed to Playwright, which sends its source): each function
 * stands alone, reaching nothing of this module but types. State lives on `window.__tarsyBench`.
 * No function inside them is bound to a name (`const f = () => …`): a transpiler keeping names
 * wraps those in a helper of its own, which the page does not have. Loops await the next frame
 * instead.
 */

export interface Probes {
  /** Long tasks (Long Tasks API, ≥ 50 ms) as [start, end] in ms since navigation start. */
  longTasks: [number, number][];
  /** When an element matching the watched selector was first in the DOM (ms), if yet. */
  firstSeen: number | null;
  /** Frame deltas while a recording runs (see `startFrames`). */
  frames: number[] | null;
}

type ProbeWindow = Window & { __tarsyBench: Probes };

/**
 * Installed before the page's own scripts (`addInitScript`): records long tasks from
 * navigation start, and the moment `selector` first matches (a MutationObserver, disconnected
 * then).
 */
export function installProbes(selector: string): void {
  const probes: Probes = { longTasks: [], firstSeen: null, frames: null };
  (window as unknown as ProbeWindow).__tarsyBench = probes;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      probes.longTasks.push([e.startTime, e.startTime + e.duration]);
  }).observe({ type: "longtask", buffered: true });
  const watcher = new MutationObserver(() => {
    if (probes.firstSeen === null && document.querySelector(selector)) {
      probes.firstSeen = performance.now();
      watcher.disconnect();
    }
  });
  watcher.observe(document, { childList: true, subtree: true });
}

/** Whether the watched element has been in the DOM. */
export function seen(): boolean {
  return (window as unknown as ProbeWindow).__tarsyBench.firstSeen !== null;
}

/**
 * Time to interactive, in ms since navigation start: from the moment the watched element was
 * first in the DOM, the end of the last long task before a `quietMs` window without one (that
 * moment itself when no long task runs past it). Resolves once the window has passed.
 */
export async function interactive(args: {
  quietMs: number;
  timeoutMs: number;
}): Promise<{ firstSeenMs: number; interactiveMs: number; longTasks: number }> {
  const probes = (window as unknown as ProbeWindow).__tarsyBench;
  const first = probes.firstSeen;
  if (first === null) throw new Error("the watched element never appeared");
  const deadline = performance.now() + args.timeoutMs;
  for (;;) {
    const after = probes.longTasks.filter(([, end]) => end > first);
    const settled = after.reduce((latest, [, end]) => Math.max(latest, end), first);
    if (performance.now() - settled >= args.quietMs) {
      return { firstSeenMs: first, interactiveMs: settled, longTasks: after.length };
    }
    if (performance.now() > deadline) {
      throw new Error(`the main thread was not idle for ${args.quietMs} ms in time`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Duration and size of the first resource fetched whose URL contains `part`. */
export function resourceTiming(part: string): { ms: number; bytes: number } | null {
  const entry = performance
    .getEntriesByType("resource")
    .find((e): e is PerformanceResourceTiming => e.name.includes(part));
  return entry ? { ms: entry.responseEnd - entry.startTime, bytes: entry.decodedBodySize } : null;
}

/** Elements in the document, and those matching `selector`. */
export function domCounts(selector: string): { elements: number; matching: number } {
  return {
    elements: document.getElementsByTagName("*").length,
    matching: document.querySelectorAll(selector).length,
  };
}

/** Starts recording frame deltas (a `requestAnimationFrame` loop until `stopFrames`). */
export function startFrames(): void {
  const probes = (window as unknown as ProbeWindow).__tarsyBench;
  const frames: number[] = [];
  probes.frames = frames;
  void (async () => {
    let last: number | null = null;
    while (probes.frames === frames) {
      const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
      if (last !== null) frames.push(now - last);
      last = now;
    }
  })();
}

/**
 * Stops the recording once it holds at least `minFrames` deltas (on a starved machine a few
 * seconds may pass in fewer frames) and returns them.
 */
export async function stopFrames(minFrames: number): Promise<number[]> {
  const probes = (window as unknown as ProbeWindow).__tarsyBench;
  const frames = probes.frames ?? [];
  while (probes.frames === frames && frames.length < minFrames) {
    await new Promise<number>((resolve) => requestAnimationFrame(resolve));
  }
  probes.frames = null;
  return frames;
}

/**
 * Scrolls the window down and up at a constant speed for `seconds` and at least `minFrames`
 * frames, one step per animation frame (a slow frame scrolls further, as a real fling would),
 * recording the frame deltas and, every tenth frame, how many elements match `selector`.
 */
export async function scrollAround(args: {
  seconds: number;
  minFrames: number;
  pxPerSecond: number;
  selector: string;
}): Promise<{ deltas: number[]; distancePx: number; turns: number; maxMatching: number }> {
  const deltas: number[] = [];
  let maxMatching = document.querySelectorAll(args.selector).length;
  let distancePx = 0;
  let turns = 0;
  let direction = 1;
  window.scrollTo(0, 0);
  const started = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
  let last = started;
  while (last - started < args.seconds * 1000 || deltas.length < args.minFrames) {
    const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
    const delta = now - last;
    last = now;
    deltas.push(delta);
    const bottom = document.documentElement.scrollHeight - window.innerHeight;
    let y = window.scrollY + (direction * args.pxPerSecond * delta) / 1000;
    if (y >= bottom || y <= 0) {
      y = Math.min(Math.max(y, 0), bottom);
      direction = -direction;
      turns++;
    }
    distancePx += Math.abs(y - window.scrollY);
    window.scrollTo(0, y);
    if (deltas.length % 10 === 0) {
      maxMatching = Math.max(maxMatching, document.querySelectorAll(args.selector).length);
    }
  }
  return { deltas, distancePx, turns, maxMatching };
}

/** Scrolls to the bottom; whether the element `#<id>` is then (at least partly) in the window. */
export function scrollToEndAndFind(id: string): boolean {
  window.scrollTo(0, document.documentElement.scrollHeight);
  const el = document.getElementById(id);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}

/** Whether `#<id>` is in the window and its text contains `text`. */
export function shownInWindow(args: { id: string; text: string }): boolean {
  const el = document.getElementById(args.id);
  if (!el?.textContent?.includes(args.text)) return false;
  const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}
