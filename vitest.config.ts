import { existsSync, readdirSync } from "node:fs";
import { defineConfig } from "vitest/config";

/** Every workspace folder with tests is a vitest project sharing the settings below. */
const projectDirs = ["packages", "services"]
  .flatMap((group) => readdirSync(group).map((name) => `${group}/${name}`))
  .concat(["llm-service", "test"])
  .filter((dir) => existsSync(`${dir}/package.json`));

export default defineConfig({
  test: {
    projects: projectDirs.map((dir) => ({
      extends: true,
      test: {
        name: dir.split("/").pop() ?? dir,
        root: dir,
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
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
