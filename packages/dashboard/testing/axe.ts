import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** The dashboard's two themes, each audited on its own. */
export const THEMES = ["light", "dark"] as const;

/** Switches the dashboard to `theme` with its theme button, unless it shows that one already. */
export async function showTheme(page: Page, theme: (typeof THEMES)[number]): Promise<void> {
  const current = await page.evaluate(() => document.documentElement.dataset.theme);
  if (current !== theme)
    await page.getByRole("button", { name: `Switch to ${theme} theme` }).click();
}

/**
 * Runs axe-core on the page once its transitions have ended; the violations of `serious` or
 * `critical` impact.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Colours mid-transition (a theme just switched, a label moving) are not what a reader sees.
  // A spinner's animation never ends: only the finite ones are waited for.
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().iterations !== Infinity)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
  // Evaluated over the DevTools protocol: a <script> tag (addScriptTag) would be an inline
  // script, which the dashboard's Content-Security-Policy refuses.
  await page.evaluate(readFileSync(AXE_SOURCE, "utf8"));
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations as {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[];
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ")),
    }));
}
