/**
 * First-tool-call latency with and without mcp-gateway's warm MCP pool (see mcp-pool/run.ts).
 *
 *   pnpm --filter @tarsy/bench mcp-pool      (NATS on NATS_URL or 127.0.0.1:4222; EXECUTIONS=30)
 */
import { formatRows, runPoolBench } from "./mcp-pool/run.ts";

const rows = await runPoolBench({
  executions: Number(process.env.EXECUTIONS ?? 30),
  natsUrl: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
});
console.log(formatRows(rows));
