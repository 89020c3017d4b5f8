import { databaseUrl, natsUrl } from "@tarsy/testkit";
import { describe, expect, it } from "vitest";
import { HOP_NAMES } from "../../bench/investigation/hops.ts";
import { runInvestigationBench } from "../../bench/investigation/run.ts";

/**
 * The whole-system benchmark (`pnpm --filter @tarsy/bench investigation`) run small, so it
 * cannot rot: the stack boots, sessions complete, every hop, baseline and service's CPU gets a
 * figure. No timing is asserted (figures come from the benchmark, on an idle machine).
 */
describe("investigation benchmark (smoke)", () => {
  it("runs sessions one at a time and at once, and prints the hop breakdown", async () => {
    const lines: string[] = [];
    const result = await runInvestigationBench({
      databaseUrl: databaseUrl(),
      natsUrl: natsUrl(),
      sequential: 2,
      parallel: 2,
      log: (line) => lines.push(line),
    });
    expect(result.sequentialWallMs).toHaveLength(2);
    expect(result.hops.map((h) => h.label)).toEqual(HOP_NAMES.map((h) => h.label));
    const hop = (key: string) => result.hops[HOP_NAMES.findIndex((h) => h.key === key)]?.ms;
    // The demo chain calls the LLM and its tools: both have a time of their own.
    expect(hop("llm")).toBeGreaterThan(0);
    expect(hop("tools")).toBeGreaterThan(0);
    expect(hop("wall")).toBeGreaterThan((hop("llm") ?? 0) + (hop("tools") ?? 0));
    for (const figure of Object.values(result.baselines)) expect(figure).toBeGreaterThan(0);
    expect(Object.keys(result.cpuPerSession).sort()).toEqual([
      "agent-runner",
      "ingest-api",
      "llm-service",
      "mcp-gateway",
      "notifier",
      "orchestrator",
      "stream-relay",
    ]);
    expect(result.parallelAllMs).toBeGreaterThan(0);
    expect(lines.join("\n")).toContain("where the time goes");
  }, 180_000);
});
