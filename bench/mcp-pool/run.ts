/**
 * First-tool-call latency of an agent execution through mcp-gateway, with and without a warm
 * pool, beside raw baselines measured in the same run with the MCP SDK alone: starting the
 * server process and initializing it (what a cold execution cannot avoid), and one call on a
 * session already open (what a warm one cannot avoid). The server is the demo cluster (stdio,
 * plain node), as `pnpm start` runs it.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectBus } from "@tarsy/bus";
import type { McpServerConfig } from "@tarsy/config";
import { createMaskingService } from "@tarsy/masking";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { DEFAULT_TIMEOUTS, startGateway } from "@tarsy/mcp-gateway";
import { createLogger } from "@tarsy/runtime";
import { until } from "@tarsy/testkit/until";

const DEMO_CLUSTER = fileURLToPath(
  new URL("../../packages/stack/demo/cluster-mcp-server.mjs", import.meta.url),
);
const TOOL = { name: "get_pods", arguments: { namespace: "payments" } };

export interface Row {
  what: string;
  p50: number;
  p95: number;
  max: number;
}

export interface PoolBenchOptions {
  /** Executions per case. */
  executions: number;
  natsUrl: string;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

function row(what: string, samples: number[]): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    what,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

const sdkClient = () => new Client({ name: "bench", version: "1" }, { capabilities: {} });
const stdio = () =>
  new StdioClientTransport({ command: process.execPath, args: [DEMO_CLUSTER], stderr: "ignore" });

/** Raw: spawn the server, initialize, call once, close (each sample). */
async function rawCold(n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const client = sdkClient();
    const started = performance.now();
    await client.connect(stdio());
    await client.callTool(TOOL);
    samples.push(performance.now() - started);
    await client.close();
  }
  return samples;
}

/** Raw: one call on a session that is already open. */
async function rawWarm(n: number): Promise<number[]> {
  const client = sdkClient();
  await client.connect(stdio());
  await client.callTool(TOOL);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await client.callTool(TOOL);
    samples.push(performance.now() - started);
  }
  await client.close();
  return samples;
}

/**
 * Through a real gateway: each execution's first call and a second one, then its release; the
 * pool refills between executions.
 */
async function gatewayCalls(
  options: PoolBenchOptions,
  warmPoolSize: number,
): Promise<{ first: number[]; later: number[] }> {
  const logger = createLogger({ service: "bench", level: "silent" });
  const prefix = `bench${randomBytes(3).toString("hex")}`;
  const bus = await connectBus({ servers: options.natsUrl, name: prefix, logger, prefix });
  const server: McpServerConfig = {
    id: "demo",
    transport: { type: "stdio", command: process.execPath, args: [DEMO_CLUSTER], env: {} },
    data_masking: {
      enabled: true,
      pattern_groups: ["kubernetes"],
      patterns: [],
      custom_patterns: [],
    },
    summarization: { enabled: false, size_threshold_tokens: 5000, summary_max_token_limit: 1000 },
    auth: { mode: "shared", fallback_to_shared: false },
  };
  const gateway = await startGateway(
    { bus, masking: createMaskingService(), logger },
    {
      servers: new Map([[server.id, server]]),
      timeouts: DEFAULT_TIMEOUTS,
      healthIntervalMs: 600_000,
      idleTimeoutMs: 600_000,
      inheritedEnv: process.env,
      warmPoolSize,
    },
  );
  const client = createMcpGatewayClient(bus);
  const first: number[] = [];
  const later: number[] = [];
  const call = async (execution: string) => {
    const started = performance.now();
    const reply = await client.callTool(
      { execution_id: execution, servers: ["demo"] },
      { name: "demo.get_pods", arguments: JSON.stringify(TOOL.arguments) },
    );
    if (reply.is_error) throw new Error(`tool call failed: ${reply.content}`);
    return performance.now() - started;
  };
  try {
    for (let i = 0; i <= options.executions; i++) {
      await until(() => gateway.pool.idleCount("demo") === warmPoolSize, {
        what: "the pool to fill",
        timeoutMs: 60_000,
        intervalMs: 5,
      });
      const execution = `${prefix}-${i}`;
      const took = await call(execution);
      const again = await call(execution);
      // The first execution warms the gateway's own code paths.
      if (i > 0) {
        first.push(took);
        later.push(again);
      }
      await client.release(execution);
    }
  } finally {
    await gateway.stop();
    await bus.close();
  }
  return { first, later };
}

/** Every case, each row in milliseconds. */
export async function runPoolBench(options: PoolBenchOptions): Promise<Row[]> {
  const n = options.executions;
  const cold = await gatewayCalls(options, 0);
  const warm = await gatewayCalls(options, 1);
  return [
    row("raw: start + initialize + call (MCP SDK)", await rawCold(n)),
    row("raw: call on an open session (MCP SDK)", await rawWarm(n)),
    row("gateway, no pool (MCP_WARM_POOL_SIZE=0)", cold.first),
    row("gateway, warm pool of 1", warm.first),
    row("gateway, the execution's second call", [...cold.later, ...warm.later]),
  ];
}

export function formatRows(rows: Row[]): string {
  const width = Math.max(...rows.map((r) => r.what.length));
  const lines = [`${"an execution's tool call".padEnd(width)}   p50 ms   p95 ms   max ms`];
  for (const r of rows) {
    lines.push(
      `${r.what.padEnd(width)}  ${r.p50.toFixed(1).padStart(7)}  ${r.p95.toFixed(1).padStart(7)}  ${r.max.toFixed(1).padStart(7)}`,
    );
  }
  return lines.join("\n");
}
