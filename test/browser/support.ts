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
  shot(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The whole system as processes (scripted LLM, demo cluster MCP server), ingest-api serving
 * the freshly built dashboard, and Chromium with one page. The relay runs on its own port,
 * so the page is told its URL with `?ws=` (kept for the tab) and the relay accepts the origin.
 */
export async function startDashboardRig(
  options: Partial<Pick<StackOptions, "configDir" | "llmScriptPath" | "env">> = {},
): Promise<DashboardRig> {
  const dist = await buildDashboard();
  const system = await bootSystem({
    llmScriptPath: SCRIPT,
    ...options,
    env: { ...options.env, DASHBOARD_DIR: dist, RELAY_ALLOWED_ORIGINS: "*" },
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    const base = system.stack.apiUrl;
    const ws = encodeURIComponent(system.stack.wsUrl);
    await page.goto(`${base}/?ws=${ws}`);
    return {
      system,
      browser,
      page,
      url: (path) => `${base}${path}`,
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
