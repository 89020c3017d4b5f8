import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A nats-server (JetStream on, file storage) of one test's own, so the test can kill it and
 * start it again on the same port and store: what a NATS outage looks like to a service.
 */
export interface PrivateNats {
  url: string;
  /** Starts the server (again); resolves once it listens. */
  start(): Promise<void>;
  /** SIGKILLs the server, as a crash would; resolves once it is gone. */
  kill(): Promise<void>;
  /** Kills the server and deletes its store. */
  cleanup(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** True once something listens on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(true));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(false)));
  });
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "tarsy-nats-"));
  let server: ChildProcess | undefined;
  const nats: PrivateNats = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      server = spawn(
        "/usr/sbin/nats-server",
        ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir],
        { stdio: "ignore" },
      );
      const deadline = Date.now() + 10_000;
      while (!(await listening(port))) {
        if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async kill() {
      const child = server;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await once(child, "exit");
    },
    async cleanup() {
      await nats.kill();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
  await nats.start();
  return nats;
}
