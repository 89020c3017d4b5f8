import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { Bus } from "@tarsy/bus";
import { createMcpGatewayClient } from "@tarsy/mcp-client";

/** The real mcp-gateway service, started as a process on the test's NATS prefix. */

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const TSX_BIN = `${REPO_ROOT}/node_modules/.bin/tsx`;
export const EVERYTHING_MAIN = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
/** Variables the test configs interpolate. */
export const CONFIG_ENV = { NODE_BIN: process.execPath, EVERYTHING_MCP: EVERYTHING_MAIN };

export interface GatewayProcess {
  output(): string;
  stop(): Promise<void>;
}

export async function startGatewayProcess(options: {
  bus: Bus;
  configDir: string;
  /** Wait until every server initialized (default true). */
  waitReady?: boolean;
}): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(TSX_BIN, [`${REPO_ROOT}/services/mcp-gateway/src/main.ts`], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...CONFIG_ENV,
      TARSY_CONFIG_DIR: options.configDir,
      TARSY_SUBJECT_PREFIX: options.bus.prefix,
      TARSY_STREAM_SUFFIX: options.bus.streamSuffix,
      MCP_GATEWAY_REPLICA_ID: `ingest-test-${process.pid}`,
      MCP_INIT_TIMEOUT_MS: "5000",
      MCP_HEALTH_INTERVAL_MS: "1000",
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const client = createMcpGatewayClient(options.bus, { shortTimeoutMs: 1_000 });
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mcp-gateway exited early:\n${output}`);
    try {
      const health = await client.health();
      if (options.waitReady === false || health.ready) break;
    } catch {
      // not serving yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`mcp-gateway not ready in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { output: () => output, stop };
}
