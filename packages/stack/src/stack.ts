import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { migrate } from "@tarsy/db";
import { startGuard } from "./guard.ts";
import { ensureNats, ensurePostgres, freePort, type ManagedInfra } from "./infra.ts";
import { type LogSink, type RunningProcess, startProcess } from "./processes.ts";

export interface StackOptions {
  /** Repository root (where services/ and llm-service/ are). */
  root: string;
  /** Directory with tarsy.yaml and llm-providers.yaml. */
  configDir: string;
  /** Unset: embedded Postgres. */
  databaseUrl?: string;
  /** Unset: local NATS on 4222, or a nats-server started here. */
  natsUrl?: string;
  /** Subject prefix and stream suffix; tests give each stack its own. */
  prefix?: string;
  streamSuffix?: string;
  /** Script for llm-service's scripted backend. */
  llmScriptPath?: string;
  /** How many of each process (agent-runner defaults to 2, the rest to 1). */
  replicas?: Partial<Record<ServiceName, number>>;
  logLevel?: string;
  /** Extra environment for every service (e.g. provider API keys). */
  env?: Record<string, string>;
  log?: LogSink;
}

export type ServiceName =
  | "llm-service"
  | "mcp-gateway"
  | "orchestrator"
  | "agent-runner"
  | "stream-relay"
  | "notifier"
  | "ingest-api";

export interface Stack {
  /** Base URL of ingest-api replica 1 (REST API and dashboard). */
  apiUrl: string;
  apiUrls: string[];
  /** WebSocket URL of stream-relay replica 1. */
  wsUrl: string;
  wsUrls: string[];
  databaseUrl: string;
  natsUrl: string;
  prefix: string;
  streamSuffix: string;
  processes: RunningProcess[];
  /**
   * Prometheus endpoint of every process started, by process name (e.g. `orchestrator-1`):
   * the ops server of orchestrator, agent-runner, mcp-gateway, notifier and llm-service (which also
   * serves `/health` and `/ready` there), the HTTP port of ingest-api and stream-relay.
   */
  metricsUrls: Record<string, string>;
  /** The running process named e.g. `agent-runner-1`. */
  process(name: string): RunningProcess;
  /**
   * Starts one more process of a service (after a crash, or to scale). An llm-service takes
   * the address of a replica that is gone (runners know only the addresses set at start).
   */
  start(service: ServiceName): Promise<RunningProcess>;
  stop(): Promise<void>;
}

const DIRS: Record<ServiceName, string> = {
  "llm-service": "llm-service",
  "mcp-gateway": "services/mcp-gateway",
  orchestrator: "services/orchestrator",
  "agent-runner": "services/agent-runner",
  "stream-relay": "services/stream-relay",
  notifier: "services/notifier",
  "ingest-api": "services/ingest-api",
};
/** Start order: what others depend on first. */
const ORDER: ServiceName[] = [
  "llm-service",
  "mcp-gateway",
  "orchestrator",
  "agent-runner",
  "stream-relay",
  "notifier",
  "ingest-api",
];

/**
 * Starts the whole system as processes: infrastructure (or the given URLs), migrations, then
 * every service with prefixed logs. `stop()` ends everything in reverse order.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const infra: ManagedInfra[] = [];
  const processes: RunningProcess[] = [];
  const counters = new Map<ServiceName, number>();
  // Ends every process started here and removes temporary directories if this process dies
  // before stop() (a signal, SIGKILL, its launcher gone).
  const guard = startGuard();
  try {
    const pg = await ensurePostgres(options.databaseUrl, guard);
    infra.push(pg);
    const nats = await ensureNats(options.natsUrl, undefined, guard);
    infra.push(nats);
    for (const i of infra) {
      if (i.tempDir) log(`stack            | temporary directory: ${i.tempDir}`);
    }
    const applied = await migrate(pg.url);
    log(
      `stack            | postgres: ${pg.describe}; migrations applied: ${applied.applied.length}`,
    );
    log(`stack            | nats: ${nats.describe}`);

    const id = randomBytes(3).toString("hex");
    const prefix = options.prefix ?? "tarsy";
    const streamSuffix = options.streamSuffix ?? "";
    // llm-service replicas listen on ports fixed up front, so agent runners balance over all
    // of them and a replica restarted after a crash comes back on the same address.
    const llmPorts: number[] = [];
    for (let i = 0; i < (options.replicas?.["llm-service"] ?? 1); i++) {
      llmPorts.push(await freePort());
    }
    const llmPortOf = new Map<RunningProcess, number>();
    /** Ports given to llm-service replicas still starting. */
    const llmPortsClaimed = new Set<number>();
    const llmAddress =
      llmPorts.length === 1
        ? `127.0.0.1:${llmPorts[0]}`
        : `ipv4:${llmPorts.map((p) => `127.0.0.1:${p}`).join(",")}`;
    const common: Record<string, string> = {
      LOG_LEVEL: options.logLevel ?? "info",
      DATABASE_URL: pg.url,
      NATS_URL: nats.url,
      TARSY_SUBJECT_PREFIX: prefix,
      TARSY_STREAM_SUFFIX: streamSuffix,
      TARSY_CONFIG_DIR: options.configDir,
      LLM_SERVICE_ADDRESS: llmAddress,
      ...options.env,
    };
    const apiUrls: string[] = [];
    const wsUrls: string[] = [];
    const metricsUrls: Record<string, string> = {};

    /** Names the next process of a service and gives it its ports and environment. */
    const prepare = async (service: ServiceName) => {
      const n = (counters.get(service) ?? 0) + 1;
      counters.set(service, n);
      const name = `${service}-${n}`;
      const env: Record<string, string> = { ...common };
      let httpPort: number | undefined;
      switch (service) {
        case "llm-service": {
          const held = new Set([
            ...[...llmPortOf]
              .filter(([p]) => p.child.exitCode === null && p.child.signalCode === null)
              .map(([, port]) => port),
            ...llmPortsClaimed,
          ]);
          const port = llmPorts.find((p) => !held.has(p)) ?? (await freePort());
          llmPortsClaimed.add(port);
          env.LLM_SERVICE_HOST = "127.0.0.1";
          env.LLM_SERVICE_PORT = String(port);
          if (options.llmScriptPath) env.LLM_SCRIPT_PATH = options.llmScriptPath;
          break;
        }
        case "mcp-gateway":
          env.MCP_GATEWAY_REPLICA_ID = `gw-${id}-${n}`;
          break;
        case "orchestrator":
          env.POD_ID = `orchestrator-${id}-${n}`;
          break;
        case "notifier":
          env.POD_ID = `notifier-${id}-${n}`;
          break;
        case "agent-runner":
          env.RUNNER_ID = `runner-${id}-${n}`;
          break;
        case "stream-relay": {
          httpPort = await freePort();
          env.RELAY_HOST = "127.0.0.1";
          env.RELAY_PORT = String(httpPort);
          wsUrls.push(`ws://127.0.0.1:${httpPort}/api/v1/ws`);
          break;
        }
        case "ingest-api": {
          httpPort = await freePort();
          env.HOST = "127.0.0.1";
          env.PORT = String(httpPort);
          if (wsUrls[0]) env.TARSY_WS_URL = wsUrls[0];
          apiUrls.push(`http://127.0.0.1:${httpPort}`);
          break;
        }
      }
      if (httpPort === undefined) {
        // The others get an ops server (/metrics, /health, /ready) on a port of their own.
        httpPort = await freePort();
        env.METRICS_HOST = "127.0.0.1";
        env.METRICS_PORT = String(httpPort);
      }
      metricsUrls[name] = `http://127.0.0.1:${httpPort}/metrics`;
      return { service, name, env };
    };

    /** Starts a prepared process and waits until it is ready. */
    const launch = async (
      prepared: Awaited<ReturnType<typeof prepare>>,
    ): Promise<RunningProcess> => {
      const { service, name, env } = prepared;
      // Listed as soon as it runs, so that a failed start still stops it.
      const onSpawn = (running: RunningProcess) => processes.push(running);
      const running = await startProcess(
        { name, cwd: join(options.root, DIRS[service]), env, guard, onSpawn },
        log,
      );
      if (service === "llm-service") {
        const port = Number(env.LLM_SERVICE_PORT);
        llmPortsClaimed.delete(port);
        llmPortOf.set(running, port);
      }
      return running;
    };

    const start = async (service: ServiceName): Promise<RunningProcess> =>
      launch(await prepare(service));

    // Every port and address is handed out first (ingest-api needs the relay's), then the
    // processes start together: each provisions the streams it needs and waits for what it
    // talks to, so the order they come up in does not matter, and a stack is up in the time of
    // its slowest service rather than the sum of them.
    const initial: Awaited<ReturnType<typeof prepare>>[] = [];
    for (const service of ORDER) {
      const count = options.replicas?.[service] ?? (service === "agent-runner" ? 2 : 1);
      for (let i = 0; i < count; i++) initial.push(await prepare(service));
    }
    const launched = await Promise.allSettled(initial.map(launch));
    const failed = launched.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    log(`stack            | up: API ${apiUrls[0]}  WebSocket ${wsUrls[0]}`);
    for (const [name, url] of Object.entries(metricsUrls)) {
      log(`stack            | metrics: ${name.padEnd(16)} ${url}`);
    }

    let stopped = false;
    return {
      apiUrl: apiUrls[0] as string,
      apiUrls,
      wsUrl: wsUrls[0] as string,
      wsUrls,
      databaseUrl: pg.url,
      natsUrl: nats.url,
      prefix,
      streamSuffix,
      processes,
      metricsUrls,
      process(name) {
        const found = processes.find((p) => p.name === name);
        if (!found) throw new Error(`no process ${name}`);
        return found;
      },
      start,
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          // Every service drains its own work on SIGTERM, so they stop together: a stack is
          // down in the time of its slowest service rather than the sum of them.
          await Promise.all(processes.map((p) => p.stop()));
          for (const i of infra.reverse()) await i.stop();
        } finally {
          guard.close();
        }
      },
    };
  } catch (err) {
    await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
    for (const i of infra.reverse()) await i.stop().catch(() => undefined);
    guard.close();
    throw err;
  }
}
