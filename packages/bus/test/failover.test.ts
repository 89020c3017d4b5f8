import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectBus, createBusAdmin } from "../src/index.ts";
import {
  captureLogger,
  eventually,
  executionRequested,
  freePort,
  type Harness,
  harness,
  NATS_URL,
  sleep,
  startNatsServer,
} from "./support.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function lines(child: ChildProcess): string[] {
  const out: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    out.push(...parts);
  });
  return out;
}

describe("failover", () => {
  it("redelivers work held by a process that died to a consumer on another connection", async () => {
    const h: Harness = await harness({ consumers: { runner: { ackWaitMs: 1_500 } } });
    cleanups.push(() => h.cleanup());
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "workers/hanging-worker.ts"),
        NATS_URL,
        h.prefix,
        h.streamSuffix,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    cleanups.push(() => void child.kill("SIGKILL"));
    const out = lines(child);
    await eventually(() => (out.includes("ready") ? true : undefined), 15_000, "worker ready");

    const payload = executionRequested();
    await h.bus.publish("executionRequested", payload);
    await eventually(() => (out.length > 1 ? true : undefined), 5_000, "worker took the work");
    expect(JSON.parse(out[1]!)).toEqual({ execution_id: payload.execution_id, delivery: 1 });

    child.kill("SIGKILL");
    const taken: { id: string; delivery: number }[] = [];
    const survivor = await h.bus.consume(
      "runner",
      {
        executionRequested: async (p, ctx) =>
          void taken.push({ id: p.execution_id, delivery: ctx.deliveryCount }),
      },
      { fetchExpiresMs: 1_000 },
    );
    cleanups.push(async () => void (await survivor.stop()));
    await eventually(() => taken[0], 8_000, "redelivery after ack_wait");
    expect(taken).toEqual([{ id: payload.execution_id, delivery: 2 }]);
  });

  it("survives a server restart: logs each state change once, reconnects and keeps consuming", async () => {
    const port = await freePort();
    const store = mkdtempSync(join(tmpdir(), "tarsy-nats-"));
    cleanups.push(() => rmSync(store, { recursive: true, force: true }));
    let server = startNatsServer(port, store);
    cleanups.push(() => void server.kill("SIGKILL"));
    const { logger, lines: logLines } = captureLogger();
    const url = `nats://127.0.0.1:${port}`;
    const bus = await eventually(
      () =>
        connectBus({ servers: url, name: "restart-test", logger, prefix: "restart" }).catch(
          () => undefined,
        ),
      10_000,
      "private nats-server",
    );
    cleanups.push(() => bus.close());
    await createBusAdmin(bus).provision();
    const handled: string[] = [];
    const worker = await bus.consume(
      "runner",
      { executionRequested: async (p) => void handled.push(p.execution_id) },
      { fetchExpiresMs: 1_000 },
    );
    cleanups.push(async () => void (await worker.stop()));
    const before = executionRequested();
    await bus.publish("executionRequested", before);
    await eventually(() => (handled.length === 1 ? true : undefined), 5_000, "work before restart");

    // The server goes away under the client: what matters here is the client (one log line
    // per state change, reconnect, the pull loop resumes). SIGTERM, so the store is written out
    // and the restart starts from what the server acknowledged; a SIGKILL can lose its last
    // unflushed writes (an ack, then redelivered after ack_wait). SIGKILL under a working
    // service: services/agent-runner/test/timeline-outage.test.ts.
    server.kill("SIGTERM");
    await eventually(() => (bus.isConnected() ? undefined : true), 5_000, "disconnect noticed");
    await new Promise((resolve) =>
      server.exitCode === null ? server.once("exit", resolve) : resolve(undefined),
    );
    expect((await bus.health()).connected).toBe(false);
    await sleep(2_500); // several failed reconnect attempts
    server = startNatsServer(port, store);
    await eventually(() => (bus.isConnected() ? true : undefined), 15_000, "reconnect");

    const after = executionRequested();
    await eventually(
      () => bus.publish("executionRequested", after).catch(() => undefined),
      10_000,
      "publish after restart",
    );
    await eventually(() => (handled.length === 2 ? true : undefined), 10_000, "work after restart");
    expect(handled).toEqual([before.execution_id, after.execution_id]);

    const messages = logLines().map((l) => l.msg);
    expect(messages.filter((m) => m === "nats disconnected; reconnecting")).toHaveLength(1);
    expect(messages.filter((m) => m === "nats reconnected")).toHaveLength(1);
    expect(messages.filter((m) => m === "nats error")).toEqual([]);
  }, 60_000);
});
