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

/** Reads the focused element. */
export function focusStop(page: Page): Promise<FocusStop> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) {
      return { what: "(page)", none: true, focusVisible: false, ring: false, inView: false };
    }
    const outlined = (e: Element) => {
      if (!e.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
      const cs = getComputedStyle(e);
      const transparent = cs.outlineColor === "transparent" || /, 0\)$/.test(cs.outlineColor);
      return cs.outlineStyle !== "none" && Number.parseFloat(cs.outlineWidth) >= 2 && !transparent;
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
    };
  });
}

/** Whether focus shows as it should: visible keyboard focus, a ring, on screen. */
export function marked(stop: FocusStop): boolean {
  return stop.none || (stop.focusVisible && stop.ring && stop.inView);
}

/** Whether the element (any of those the locator matches) has focus. Does not wait. */
export function isFocused(target: Locator): Promise<boolean> {
  return target.evaluateAll((els) => els.some((el) => el === document.activeElement));
}

/** Two frames: what a key press sets off (a scroll, a re-render) has been painted. */
export function settled(page: Page): Promise<void> {
  return page.evaluate(
    () => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))),
  );
}

/** Presses a key and reads where focus is afterwards. */
export async function pressKey(page: Page, key: string): Promise<FocusStop> {
  await page.keyboard.press(key);
  await settled(page);
  return focusStop(page);
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
      const stop = await pressKey(page, key);
      if (stop.none) return trail;
      if (!first) first = await page.evaluateHandle(() => document.activeElement);
      else if (await page.evaluate((el) => el === document.activeElement, first)) return trail;
      trail.push(stop);
    }
  } finally {
    await first?.dispose();
  }
  const last = trail.slice(-8).map((s) => s.what);
  throw new Error(`${max} × ${key} never got round the page; last: ${last.join(" → ")}`);
}
