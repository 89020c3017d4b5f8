import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Browser, chromium, type LaunchOptions, type Page } from "playwright-core";

/** Helpers for the browser tests in test/browser (playwright-core lives in this package). */

export const DASHBOARD_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST_DIR = join(DASHBOARD_DIR, "dist");
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Builds the SPA into dist/ (the browser tests serve the current source, never a stale build). */
export async function buildDashboard(): Promise<string> {
  const vite = join(DASHBOARD_DIR, "node_modules/.bin/vite");
  // vitest sets NODE_ENV=test, which would bundle React's development build.
  await promisify(execFile)(vite, ["build", "--logLevel", "warn"], {
    cwd: DASHBOARD_DIR,
    env: { ...process.env, NODE_ENV: "production" },
  });
  if (!existsSync(join(DIST_DIR, "index.html"))) throw new Error("vite build wrote no index.html");
  return DIST_DIR;
}

/**
 * Headless Chromium. `handleSIGINT: false` leaves Ctrl-C to the caller (Playwright's own handler
 * closes the browser and exits at once, before the caller's cleanup).
 */
export async function launchChromium(
  options: Pick<LaunchOptions, "handleSIGINT"> = {},
): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    ...options,
  });
}

/** Saves a full-page screenshot as `<dir>/<name>.png`. */
export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export type { Browser, Page };
