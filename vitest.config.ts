import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Every workspace folder with tests is a vitest project sharing the settings below (test/ is
 * two: `test` and `browser`). Paths are resolved from this file, so the config works from any
 * folder: `vitest run` here runs every project once, and each package's `test` script
 * (`vitest run --root <repo> --project <folder>`) runs its own.
 */
const repoRoot = import.meta.dirname;
/**
 * Scheduling, by groups that run one after another. The packages' and services' test files run
 * three at a time: most of their time is spent waiting on what they start (Postgres, NATS,
 * service processes). The whole-system scenarios (test/e2e, project `test`) and the
 * evaluation harness (evals/) boot every service each, so they run two at a time after them;
 * the browser tests (test/browser, project `browser`) add Chromium to that, so they run one at
 * a time. Both have room for a test that waits on a busy machine (their timeouts bound a
 * hang, not speed: benchmarks measure speed). `pnpm start`'s own tests (packages/stack) boot
 * the stack a user gets, on the shared NATS with the default prefix, so they run last and
 * alone.
 */
interface Group {
  maxWorkers: number;
  sequence: { groupOrder: number };
  testTimeout?: number;
}
const DEFAULT_GROUP: Group = { maxWorkers: 3, sequence: { groupOrder: 0 } };
const SYSTEM_GROUP: Group = { maxWorkers: 2, sequence: { groupOrder: 1 }, testTimeout: 120_000 };
const BROWSER_GROUP: Group = { maxWorkers: 1, sequence: { groupOrder: 2 }, testTimeout: 120_000 };
const STACK_GROUP: Group = { maxWorkers: 1, sequence: { groupOrder: 3 } };

const INCLUDE = ["src/**/*.test.ts", "test/**/*.test.ts"];

interface Project {
  name: string;
  dir: string;
  include: string[];
  group: Group;
}

const packageProjects: Project[] = ["packages", "services"]
  .flatMap((group) => readdirSync(join(repoRoot, group)).map((name) => `${group}/${name}`))
  .concat(["llm-service", "evals"])
  .filter((dir) => existsSync(join(repoRoot, dir, "package.json")))
  .map((dir) => ({
    name: dir.split("/").pop() ?? dir,
    dir,
    include: INCLUDE,
    group: dir === "evals" ? SYSTEM_GROUP : dir === "packages/stack" ? STACK_GROUP : DEFAULT_GROUP,
  }));

/** test/: the whole-system scenarios and manifests (`test`), and the browser tests (`browser`). */
const systemProjects: Project[] = [
  {
    name: "test",
    dir: "test",
    include: ["e2e/**/*.test.ts", "deploy/**/*.test.ts"],
    group: SYSTEM_GROUP,
  },
  { name: "browser", dir: "test", include: ["browser/**/*.test.ts"], group: BROWSER_GROUP },
];

export default defineConfig({
  test: {
    projects: [...packageProjects, ...systemProjects].map(({ name, dir, include, group }) => ({
      extends: true,
      test: { ...group, name, root: join(repoRoot, dir), include },
    })),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", join(repoRoot, "scripts/summary-reporter.ts")],
  },
});
