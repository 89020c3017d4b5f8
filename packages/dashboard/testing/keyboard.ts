import type { JSHandle, Locator, Page } from "playwright-core";

/** The focused element as a keyboard user finds it. */
export interface FocusStop {
  /** Its role (or tag) and name, for messages. */
  what: string;
  /** Nothing on the page holds focus (the document does): Tab has left the last control. */
  none: boolean;
  /** It matches `:focus-visible`. */
  focusVisible: boolean;
  /**
   * A visible outline is drawn: on the element, or for a native input MUI wraps, on the control
   * around it (a text field's frame, a checkbox's or radio's box; the input itself is invisible
   * or unframed). Only outlines count: a box-shadow is also elevation, which a contained button
   * has focused or not.
   */
  ring: boolean;
  /** It is at least partly inside the window. */
  inView: boolean;
}

/**
 * Reads the focused element, after two frames and the end of any finite animation with `settle`
 * (what the key press set off, a scroll, a re-render or a transition, has been painted); `same`
 * says whether it is `first`.
 */
function readStop(
  page: Page,
  settle: boolean,
  first: JSHandle | null,
): Promise<FocusStop & { same: boolean }> {
  return page.evaluate(
    async ([settle, first]) => {
      if (settle) {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        // A transition the key set off on what holds focus (a menu growing in from opacity 0)
        // runs to its end: what a user looks at once it stops moving. Endless ones (a spinner)
        // and those inside it (a button's focus ripple) are not waited for.
        const at = document.activeElement;
        const moving = document.getAnimations().filter((a) => {
          const target = a.effect instanceof KeyframeEffect ? a.effect.target : null;
          const finite = a.effect?.getComputedTiming().endTime !== Number.POSITIVE_INFINITY;
          return finite && at !== null && target?.contains(at);
        });
        const ended = Promise.all(moving.map((a) => a.finished.catch(() => undefined)));
        await Promise.race([ended, new Promise((r) => setTimeout(r, 2_000))]);
      }
      const el = document.activeElement;
      if (!el || el === document.body || el === document.documentElement) {
        const none = { what: "(page)", none: true, focusVisible: false, ring: false };
        return { ...none, inView: false, same: false };
      }
      const outlined = (e: Element) => {
        if (!e.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
        const cs = getComputedStyle(e);
        const transparent = cs.outlineColor === "transparent" || /, 0\)$/.test(cs.outlineColor);
        return (
          cs.outlineStyle !== "none" && Number.parseFloat(cs.outlineWidth) >= 2 && !transparent
        );
      };
      const parent = el.parentElement;
      const candidates = [el, ...(parent ? [parent, ...parent.querySelectorAll("svg")] : [])];
      const labels = (el as HTMLInputElement).labels;
      const name =
        el.getAttribute("aria-label") ??
        labels?.[0]?.textContent ??
        (el.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 60);
      const r = el.getBoundingClientRect();
      return {
        what: `${el.getAttribute("role") ?? el.tagName.toLowerCase()} "${name}"`,
        none: false,
        focusVisible: el.matches(":focus-visible"),
        ring: candidates.some(outlined),
        inView:
          r.bottom > 0 && r.top < window.innerHeight && r.right > 0 && r.left < window.innerWidth,
        same: el === first,
      };
    },
    [settle, first] as const,
  );
}

/** Reads the focused element. */
export async function focusStop(page: Page): Promise<FocusStop> {
  const { same: _, ...stop } = await readStop(page, false, null);
  return stop;
}

/** Whether focus shows as it should: visible keyboard focus, a ring, on screen. */
export function marked(stop: FocusStop): boolean {
  return stop.none || (stop.focusVisible && stop.ring && stop.inView);
}

/** Whether the element (any of those the locator matches) has focus. Does not wait. */
export function isFocused(target: Locator): Promise<boolean> {
  return target.evaluateAll((els) => els.some((el) => el === document.activeElement));
}

/** Presses a key and reads where focus is once what it set off has been painted. */
export async function pressKey(page: Page, key: string): Promise<FocusStop> {
  await page.keyboard.press(key);
  const { same: _, ...stop } = await readStop(page, true, null);
  return stop;
}

/**
 * Presses Tab (Shift+Tab with `back`) until the target has focus; every stop on the way. Fails,
 * naming the stops, when `max` presses do not reach it.
 */
export async function tabTo(
  page: Page,
  target: Locator,
  options: { back?: boolean; max?: number } = {},
): Promise<FocusStop[]> {
  const key = options.back ? "Shift+Tab" : "Tab";
  const max = options.max ?? 80;
  const trail: FocusStop[] = [];
  for (let i = 0; i < max; i++) {
    trail.push(await pressKey(page, key));
    if (await isFocused(target)) return trail;
  }
  throw new Error(
    `${max} × ${key} did not reach ${target}: ${trail.map((s) => s.what).join(" → ")}`,
  );
}

/**
 * Presses Tab (Shift+Tab with `back`) round the page: until focus leaves it, or comes back to the
 * first stop (Chromium wraps from the first control straight to the last); every stop on the
 * way. Fails when `max` presses do not get round: a keyboard trap.
 */
export async function tabThrough(
  page: Page,
  options: { back?: boolean; max?: number } = {},
): Promise<FocusStop[]> {
  const key = options.back ? "Shift+Tab" : "Tab";
  const max = options.max ?? 300;
  const trail: FocusStop[] = [];
  let first: JSHandle | null = null;
  try {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press(key);
      const { same, ...stop } = await readStop(page, true, first);
      if (stop.none || same) return trail;
      first ??= await page.evaluateHandle(() => document.activeElement);
      trail.push(stop);
    }
  } finally {
    await first?.dispose();
  }
  const last = trail.slice(-8).map((s) => s.what);
  throw new Error(`${max} × ${key} never got round the page; last: ${last.join(" → ")}`);
}
