import { natsUrl } from "@tarsy/testkit";
import { describe, expect, it } from "vitest";
import { formatRows, runPoolBench } from "../../bench/mcp-pool/run.ts";

/**
 * The warm-pool benchmark (`pnpm --filter @tarsy/bench mcp-pool`) run small, so it cannot rot:
 * every case runs through the real gateway and the demo cluster and yields figures. No timing
 * is asserted (figures come from the benchmark, on an idle machine).
 */
describe("mcp-pool benchmark (smoke)", () => {
  it("runs every case and prints a figure for each", async () => {
    const rows = await runPoolBench({ executions: 3, natsUrl: natsUrl() });
    expect(rows.map((r) => r.what)).toEqual([
      "raw: start + initialize + call (MCP SDK)",
      "raw: call on an open session (MCP SDK)",
      "gateway, no pool (MCP_WARM_POOL_SIZE=0)",
      "gateway, warm pool of 1",
      "gateway, the execution's second call",
    ]);
    for (const r of rows) {
      for (const figure of [r.p50, r.p95, r.max]) expect(figure).toBeGreaterThan(0);
    }
    expect(formatRows(rows).split("\n")).toHaveLength(rows.length + 1);
  }, 120_000);
});
