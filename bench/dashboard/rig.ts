import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Bus, connectBus, createBusAdmin } from "@tarsy/bus";
import { createLogger } from "@tarsy/runtime";
import { type Stack, startStack } from "@tarsy/stack";
import postgres from "postgres";
import {
  type Browser,
  buildDashboard,
  launchChromium,
} from "../../packages/dashboard/testing/browser.ts";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * What the dashboard needs and nothing more: ingest-api serving the fresh build (REST) and
 * stream-relay (live events), on a database and NATS prefix of their own; Chromium; a bus on
 * that prefix to publish as the services would.
 */
export interface BenchRig {
  stack: Stack;
  browser: Browser;
  bus: Bus;
  databaseUrl: string;
  /** A dashboard URL on ingest-api, telling the page where the relay is (`?ws=`). */
  pageUrl(path: string, query?: Record<string, string>): string;
  /** The services' log lines (for a failure's report). */
  logs: string[];
  /** Ends the browser and the services, deletes the streams and drops the database. */
  stop(): Promise<void>;
}

const silent = createLogger({ service: "bench", level: "silent" });

export async function startBenchRig(): Promise<BenchRig> {
  const dist = await buildDashboard();
  const id = randomBytes(4).toString("hex");
  const dbName = `tarsy_bench_${id}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${dbName}`;
  const logs: string[] = [];
  let stack: Stack | undefined;
  let bus: Bus | undefined;
  let browser: Browser | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((err: unknown) => failures.push(err));
    }
    await admin.end();
    if (failures.length) throw new AggregateError(failures, "cleaning up the benchmark failed");
  };
  try {
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
    cleanups.push(() => admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    const prefix = `bench${id}`;
    const streamSuffix = `_BENCH${id.toUpperCase()}`;
    const started = await startStack({
      root: ROOT,
      configDir: resolve(ROOT, "deploy/demo"),
      databaseUrl: databaseUrl.toString(),
      ...(process.env.NATS_URL && { natsUrl: process.env.NATS_URL }),
      prefix,
      streamSuffix,
      // The pages read what is stored and what is streamed: no LLM, tools or agents.
      replicas: { "llm-service": 0, "mcp-gateway": 0, orchestrator: 0, "agent-runner": 0 },
      logLevel: "info", // the stack knows a service is up by its "service started" line
      log: (line) => logs.push(line),
      env: {
        TARSY_REPO_ROOT: ROOT,
        DASHBOARD_DIR: dist,
        // The page comes from ingest-api's origin, the relay listens on its own port.
        RELAY_ALLOWED_ORIGINS: "*",
        LLM_SERVICE_ADDRESS: "",
      },
    });
    stack = started;
    // The services created the streams of this prefix at start; they go with the run.
    cleanups.push(async () => {
      const owner = await connectBus({
        servers: started.natsUrl,
        name: "bench-dashboard-cleanup",
        logger: silent,
        prefix,
        streamSuffix,
      });
      await createBusAdmin(owner)
        .deprovision()
        .finally(() => owner.close());
    });
    cleanups.push(() => started.stop());
    bus = await connectBus({
      servers: started.natsUrl,
      name: "bench-dashboard",
      logger: silent,
      prefix,
      streamSuffix,
    });
    const connected = bus;
    cleanups.push(() => connected.close());
    // Ctrl-C is the benchmark's: it cleans up (see `runDashboardBenchmark`'s signal).
    browser = await launchChromium({ handleSIGINT: false });
    const launched = browser;
    cleanups.push(() => launched.close());
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const ws = stack.wsUrl;
  const api = stack.apiUrl;
  return {
    stack,
    browser,
    bus,
    databaseUrl: databaseUrl.toString(),
    pageUrl(path, query = {}) {
      const search = new URLSearchParams({ ...query, ws });
      return `${api}${path}?${search}`;
    },
    logs,
    stop,
  };
}
