import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Bus, connectBus } from "@tarsy/bus";
import type { McpServerConfig } from "@tarsy/config";
import type { Db } from "@tarsy/db";
import { createMaskingService } from "@tarsy/masking";
import { createLogger, type Logger } from "@tarsy/runtime";
import { connectRawNats, natsUrl, type RawNatsConnection } from "@tarsy/testkit";
import type { UserTokenLookup } from "../src/auth/credentials.ts";
import type { McpMetrics } from "../src/call-metrics.ts";
import { type Gateway, startGateway } from "../src/gateway.ts";
import { DEFAULT_TIMEOUTS, type McpTimeouts } from "../src/timeouts.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, "../../..");
export const TSX_BIN = resolve(REPO_ROOT, "node_modules/.bin/tsx");
export const FIXTURE_SERVER = resolve(here, "servers/fixture-server.ts");
export const EVERYTHING_MAIN = resolve(
  here,
  "../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const KUBERNETES_MCP_BIN = resolve(here, "../node_modules/.bin/kubernetes-mcp-server");

/**
 * A kubeconfig whose only cluster is unreachable (127.0.0.1:1): kubernetes-mcp-server starts and
 * lists its tools with it, and every call it makes fails. Written to a temporary file per name.
 */
export function dummyKubeconfig(name: string): string {
  const path = join(tmpdir(), `tarsy-${name}-kubeconfig-${process.pid}.yaml`);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: dummy
  cluster: { server: "https://127.0.0.1:1" }
contexts:
- name: dummy
  context: { cluster: dummy, user: dummy }
current-context: dummy
users:
- name: dummy
  user: { token: dummy-token }
`,
  );
  return path;
}

export const testLogger = () =>
  createLogger({ service: "mcp-gateway-test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

const NO_MASKING: McpServerConfig["data_masking"] = {
  enabled: false,
  pattern_groups: [],
  patterns: [],
  custom_patterns: [],
};
export const K8S_MASKING: McpServerConfig["data_masking"] = {
  enabled: true,
  pattern_groups: ["kubernetes", "security"],
  patterns: [],
  custom_patterns: [],
};

export function serverConfig(
  id: string,
  transport: McpServerConfig["transport"],
  dataMasking: McpServerConfig["data_masking"] = NO_MASKING,
): McpServerConfig {
  return {
    id,
    transport,
    data_masking: dataMasking,
    summarization: { enabled: false, size_threshold_tokens: 5000, summary_max_token_limit: 1000 },
    auth: { mode: "shared", fallback_to_shared: false },
  };
}

export function fixtureStdio(env: Record<string, string> = {}): McpServerConfig["transport"] {
  return { type: "stdio", command: TSX_BIN, args: [FIXTURE_SERVER], env };
}

export function everythingStdio(): McpServerConfig["transport"] {
  return { type: "stdio", command: process.execPath, args: [EVERYTHING_MAIN, "stdio"], env: {} };
}

export function httpTransport(
  type: "http" | "sse",
  url: string,
  extra: Partial<{
    bearer_token: string;
    verify_ssl: boolean;
    timeout_ms: number;
    custom_headers: Record<string, string>;
    session_cleanup_url: string;
  }> = {},
): McpServerConfig["transport"] {
  return { type, url, verify_ssl: true, custom_headers: {}, ...extra };
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** Starts `server-everything` over HTTP (`streamableHttp` → /mcp, `sse` → /sse) and waits for it. */
export async function startEverythingHttp(
  mode: "streamableHttp" | "sse",
): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING_MAIN, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: "ignore",
  });
  const path = mode === "sse" ? "/sse" : "/mcp";
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((res) => {
      const sock = createConnection(port);
      sock.once("connect", () => {
        sock.destroy();
        res(true);
      });
      sock.once("error", () => res(false));
    });
    if (ok) break;
    if (Date.now() > deadline)
      throw new Error(`server-everything ${mode} did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}${path}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** NATS connections sharing one fresh subject prefix (no streams: the gateway API is core NATS). */
export interface TestBus {
  bus: Bus;
  prefix: string;
  /** A plain NATS connection (opened on first use), for raw requests. */
  raw(): Promise<RawNatsConnection>;
  connectAnother(): Promise<Bus>;
  cleanup(): Promise<void>;
}

export async function createTestBus(): Promise<TestBus> {
  const prefix = `t${randomBytes(4).toString("hex")}`;
  const open = (n: number) =>
    connectBus({
      servers: natsUrl(),
      name: `mcp-gateway-test-${prefix}-${n}`,
      logger: testLogger(),
      prefix,
    });
  const bus = await open(1);
  const others: Bus[] = [];
  let raw: Promise<RawNatsConnection> | undefined;
  return {
    bus,
    prefix,
    raw() {
      raw ??= connectRawNats(natsUrl(), `mcp-gateway-test-${prefix}-raw`);
      return raw;
    },
    async connectAnother() {
      const other = await open(others.length + 2);
      others.push(other);
      return other;
    },
    async cleanup() {
      for (const b of [...others, bus]) await b.close().catch(() => undefined);
      if (raw) await (await raw).close().catch(() => undefined);
    },
  };
}

export interface TestGateway {
  gateway: Gateway;
  testBus: TestBus;
  stop(): Promise<void>;
}

export interface StartTestGatewayOptions {
  timeouts?: Partial<McpTimeouts>;
  healthIntervalMs?: number;
  idleTimeoutMs?: number;
  /** Serve on an existing test bus (a second replica). */
  testBus?: TestBus;
  replicaId?: string;
  inheritedEnv?: Record<string, string | undefined>;
  userTokens?: UserTokenLookup;
  /** Postgres for action requests (without it every mutating call is refused). */
  db?: Db;
  /** Where the gateway logs (default: the quiet test logger). */
  logger?: Logger;
  /** Warm sessions per server (default 0: none). */
  warmPoolSize?: number;
  /** The gateway's metrics (default: a registry of its own). */
  metrics?: McpMetrics;
}

/** A real gateway replica on a NATS connection of its own (own subject prefix per test bus). */
export async function startTestGateway(
  servers: McpServerConfig[],
  options: StartTestGatewayOptions = {},
): Promise<TestGateway> {
  const testBus = options.testBus ?? (await createTestBus());
  const bus = options.testBus ? await testBus.connectAnother() : testBus.bus;
  const gateway = await startGateway(
    {
      bus,
      masking: createMaskingService(),
      logger: options.logger ?? testLogger(),
      ...(options.userTokens ? { userTokens: options.userTokens } : {}),
      ...(options.db ? { db: options.db } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    },
    {
      servers: new Map(servers.map((s) => [s.id, s])),
      // Spawning tsx servers on a loaded CI machine can take many seconds: a roomier init deadline.
      timeouts: { ...DEFAULT_TIMEOUTS, initMs: 60_000, ...options.timeouts },
      healthIntervalMs: options.healthIntervalMs ?? 60_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 600_000,
      inheritedEnv: options.inheritedEnv ?? process.env,
      replicaId: options.replicaId,
      ...(options.warmPoolSize !== undefined ? { warmPoolSize: options.warmPoolSize } : {}),
    },
  );
  return {
    gateway,
    testBus,
    async stop() {
      await gateway.stop();
      if (!options.testBus) await testBus.cleanup();
    },
  };
}
