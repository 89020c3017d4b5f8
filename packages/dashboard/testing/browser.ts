import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Browser, chromium, type LaunchOptions, type Page } from "playwright-core";

/** Helpers for the browser tests in test/browser (playwright-core lives in this package). */

export const DASHBOARD_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST_DIR = join(DASHBOARD_DIR, "dist");
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What a build is made from: the SPA's sources and config, the contracts it imports, the lockfile. */
const BUILD_INPUTS = [
  ...["index.html", "vite.config.ts", "package.json", "tsconfig.json", "src"].map((p) =>
    join(DASHBOARD_DIR, p),
  ),
  join(DASHBOARD_DIR, "../contracts/src"),
  join(DASHBOARD_DIR, "../../pnpm-lock.yaml"),
];
const BUILT_FROM = join(DIST_DIR, ".built-from.sha256");

/** A hash of every build input's path and bytes. */
function inputsHash(): string {
  const hash = createHash("sha256");
  const add = (path: string) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) add(join(path, name));
      return;
    }
    hash.update(relative(DASHBOARD_DIR, path)).update("\0").update(readFileSync(path)).update("\0");
  };
  for (const input of BUILD_INPUTS) add(input);
  return hash.digest("hex");
}

/**
 * Builds the SPA into dist/ (the browser tests serve the current source, never a stale build).
 * A build of the same inputs is reused: each browser test file would otherwise spend ~10 s of
 * CPU rebuilding what the previous one built.
 */
export async function buildDashboard(): Promise<string> {
  const inputs = inputsHash();
  const index = join(DIST_DIR, "index.html");
  if (existsSync(index) && existsSync(BUILT_FROM) && readFileSync(BUILT_FROM, "utf8") === inputs) {
    return DIST_DIR;
  }
  const vite = join(DASHBOARD_DIR, "node_modules/.bin/vite");
  // vitest sets NODE_ENV=test, which would bundle React's development build.
  await promisify(execFile)(vite, ["build", "--logLevel", "warn"], {
    cwd: DASHBOARD_DIR,
    env: { ...process.env, NODE_ENV: "production" },
  });
  if (!existsSync(index)) throw new Error("vite build wrote no index.html");
  writeFileSync(BUILT_FROM, inputs);
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
