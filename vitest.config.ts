import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Every workspace folder with tests is a vitest project sharing the settings below. Paths are
 * resolved from this file, so the config works from any folder: `vitest run` here runs every
 * project once, and each package's `test` script (`vitest run --root <repo> --project <folder>`)
 * runs its own.
 */
const repoRoot = import.meta.dirname;
/**
 * Scheduling. The packages' and services' test files run two at a time: most of their time is
 * spent waiting on what they start (Postgres, NATS, service processes). The whole-system
 * scenarios and browser tests (test/) and the evaluation harness (evals/) boot every service (and
 * Chromium) each, so they run one at a time after them; `pnpm start`'s own tests (packages/stack)
 * boot the stack a user gets, on the shared NATS with the default prefix, so they run last and
 * alone.
 */
const GROUPS: Record<string, { maxWorkers: number; sequence: { groupOrder: number } }> = {
  test: { maxWorkers: 1, sequence: { groupOrder: 1 } },
  evals: { maxWorkers: 1, sequence: { groupOrder: 1 } },
  "packages/stack": { maxWorkers: 1, sequence: { groupOrder: 2 } },
};
const DEFAULT_GROUP = { maxWorkers: 2, sequence: { groupOrder: 0 } };

const projectDirs = ["packages", "services"]
  .flatMap((group) => readdirSync(join(repoRoot, group)).map((name) => `${group}/${name}`))
  .concat(["llm-service", "test", "evals"])
  .filter((dir) => existsSync(join(repoRoot, dir, "package.json")));

export default defineConfig({
  test: {
    projects: projectDirs.map((dir) => ({
      extends: true,
      test: {
        ...(GROUPS[dir] ?? DEFAULT_GROUP),
        name: dir.split("/").pop() ?? dir,
        root: join(repoRoot, dir),
        include: [
          "src/**/*.test.ts",
          "test/**/*.test.ts",
          "e2e/**/*.test.ts",
          "browser/**/*.test.ts",
          "deploy/**/*.test.ts",
        ],
      },
    })),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", join(repoRoot, "scripts/summary-reporter.ts")],
  },
});
