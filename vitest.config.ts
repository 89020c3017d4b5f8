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
const projectDirs = ["packages", "services"]
  .flatMap((group) => readdirSync(join(repoRoot, group)).map((name) => `${group}/${name}`))
  .concat(["llm-service", "test"])
  .filter((dir) => existsSync(join(repoRoot, dir, "package.json")));

export default defineConfig({
  test: {
    projects: projectDirs.map((dir) => ({
      extends: true,
      test: {
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
