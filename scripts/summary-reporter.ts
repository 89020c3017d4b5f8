import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const SLOWEST = 12;

/**
 * Prints the summaries tests left in their meta (`runSummary`: the injection corpus's report),
 * the slowest test files (where CI time goes), then one plain closing line,
 * `N passed, N failed, N skipped`, after vitest's own summary, so CI logs end with a line
 * any reader (or tool) can count.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const summaries: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const summary = test.meta().runSummary;
        if (summary) summaries.push(summary);
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    const slowest = [...testModules]
      .map((m) => ({ file: relative(process.cwd(), m.moduleId), ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    for (const summary of summaries) process.stdout.write(`\n${summary}\n`);
    if (slowest.length > 1) {
      process.stdout.write("\nslowest test files:\n");
      for (const { file, ms } of slowest) {
        process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`);
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
