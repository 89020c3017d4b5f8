import { resolve } from "node:path";
import type { StackOptions } from "@tarsy/stack";
import {
  type Browser,
  buildDashboard,
  launchChromium,
  type Page,
  screenshot,
} from "../../packages/dashboard/testing/browser.ts";
import { bootSystem, type E2E, ROOT } from "../e2e/support.ts";

export const SCREENSHOTS = resolve(ROOT, "artifacts/screenshots");
export const SCRIPT = resolve(ROOT, "test/browser/fixtures/llm-script.yaml");

export interface DashboardRig {
  system: E2E;
  browser: Browser;
  page: Page;
  /** A page URL on ingest-api (which serves the dashboard build). */
  url(path: string): string;
  /**
   * A page in a browser context of its own that sends `headers` with every request, the
   * WebSocket upgrade included (as oauth2-proxy's identity headers reach the services).
   */
  pageAs(headers: Record<string, string>): Promise<Page>;
  shot(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The whole system as processes (scripted LLM, demo cluster MCP server), ingest-api serving
 * the freshly built dashboard, and Chromium with one page. The relay runs on its own port,
 * so the page is told its URL with `?ws=` (kept for the tab) and the relay accepts the origin.
 */
export async function startDashboardRig(
  options: Partial<Pick<StackOptions, "configDir" | "llmScriptPath" | "env">> & {
    /** Headers the first page sends with every request (e.g. a proxy's identity). */
    headers?: Record<string, string>;
  } = {},
): Promise<DashboardRig> {
  const { headers, ...stackOptions } = options;
  const dist = await buildDashboard();
  const system = await bootSystem({
    llmScriptPath: SCRIPT,
    ...stackOptions,
    env: { ...stackOptions.env, DASHBOARD_DIR: dist, RELAY_ALLOWED_ORIGINS: "*" },
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const pageErrors: string[] = [];
    const base = system.stack.apiUrl;
    const ws = encodeURIComponent(system.stack.wsUrl);
    const open = async (b: Browser, extraHTTPHeaders?: Record<string, string>) => {
      const context = await b.newContext({
        viewport: { width: 1400, height: 900 },
        ...(extraHTTPHeaders ? { extraHTTPHeaders } : {}),
      });
      const page = await context.newPage();
      page.on("pageerror", (err) => pageErrors.push(err.message));
      await page.goto(`${base}/?ws=${ws}`);
      return page;
    };
    const page = await open(browser, headers);
    const opened = browser;
    return {
      system,
      browser,
      page,
      url: (path) => `${base}${path}`,
      pageAs: (extra) => open(opened, extra),
      shot: (name) => screenshot(page, SCREENSHOTS, name),
      async stop() {
        await browser?.close();
        await system.stop();
        if (pageErrors.length) throw new Error(`errors in the page: ${pageErrors.join("; ")}`);
      },
    };
  } catch (err) {
    await browser?.close();
    await system.stop();
    throw err;
  }
}

/** A timeline item as the session page shows it. */
export interface ShownEntry {
  id: string;
  type: string | null;
  busy: string | null;
  /** The text of its rendered markdown (responses, analyses), else "". */
  markdown: string;
}

/**
 * Every timeline item the session page shows, read the way a user finds them: the virtualised
 * list scrolled from top to bottom, once per tab of each parallel stage. `duplicates` lists
 * items the page held twice at the same time.
 */
export async function scanTimeline(
  page: Page,
): Promise<{ entries: Map<string, ShownEntry>; duplicates: string[] }> {
  const entries = new Map<string, ShownEntry>();
  const duplicates: string[] = [];
  const top = async () => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(150);
  };
  const scroll = async () => {
    await top();
    for (;;) {
      const batch = await page.$$eval("[data-event-id]", (els) =>
        els.map((el) => ({
          id: el.getAttribute("data-event-id") ?? "",
          type: el.getAttribute("data-event-type"),
          busy: el.getAttribute("aria-busy"),
          markdown: el.querySelector(".markdown")?.textContent ?? "",
        })),
      );
      const ids = batch.map((e) => e.id);
      duplicates.push(...ids.filter((id, i) => ids.indexOf(id) !== i));
      for (const e of batch) entries.set(e.id, e);
      const moved = await page.evaluate(() => {
        const before = window.scrollY;
        window.scrollBy(0, window.innerHeight * 0.7);
        return window.scrollY !== before;
      });
      if (!moved) return;
      await page.waitForTimeout(100);
    }
  };
  await scroll();
  await top();
  const tabs = page.getByRole("tablist", { name: "Parallel agents" }).getByRole("tab");
  const count = await tabs.count();
  for (let i = 0; i < count; i++) {
    await top();
    await tabs.nth(i).click();
    await scroll();
  }
  await top();
  return { entries, duplicates };
}

/** Markdown source as its rendered text reads (markers gone, whitespace collapsed). */
export function markdownText(source: string): string {
  return source
    .replace(/^\s{0,3}#{1,6}\s+/gm, "")
    .replace(/^\s*(\d+\.|[-*+])\s+/gm, "")
    .replace(/\*\*|__|`/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Whether the element is (at least partly) inside the window. */
export function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight;
  }, selector);
}
