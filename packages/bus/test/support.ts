import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Writable } from "node:stream";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type {
  ExecutionRequested,
  SessionStatusEvent,
  TimelineEventCreated,
} from "@tarsy/contracts";
import { createLogger, type Logger } from "@tarsy/runtime";
import { coreOf } from "../src/core.ts";
import {
  type Bus,
  type BusAdmin,
  type BusOptions,
  connectBus,
  createBusAdmin,
} from "../src/index.ts";

export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** A logger whose lines the test can read. */
export function captureLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return {
    logger: createLogger({ service: "bus-test", level: "debug", destination }),
    lines: () => lines,
  };
}

export interface Harness {
  bus: Bus;
  admin: BusAdmin;
  /** The bus's own connection, for acting like a foreign client (garbage, raw JetStream). */
  raw: NatsConnection;
  prefix: string;
  streamSuffix: string;
  settings: BusOptions;
  another(overrides?: Partial<BusOptions>): Promise<Bus>;
  cleanup(): Promise<void>;
}

/** Own prefix and stream suffix per test, streams provisioned unless told otherwise. */
export async function harness(
  overrides: Partial<BusOptions> = {},
  provision = true,
): Promise<Harness> {
  const id = randomBytes(4).toString("hex");
  const settings: BusOptions = {
    servers: NATS_URL,
    name: `bus-test-${id}`,
    logger: createLogger({ service: "bus-test", level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    prefix: `t${id}`,
    streamSuffix: `_T${id.toUpperCase()}`,
    ...overrides,
  };
  const bus = await connectBus(settings);
  const admin = createBusAdmin(bus);
  if (provision) await admin.provision();
  const others: Bus[] = [];
  return {
    bus,
    admin,
    raw: coreOf(bus).connection,
    prefix: settings.prefix ?? "",
    streamSuffix: settings.streamSuffix ?? "",
    settings,
    async another(more = {}) {
      const other = await connectBus({ ...settings, ...more });
      others.push(other);
      return other;
    },
    async cleanup() {
      for (const other of others) await other.close();
      const owner = coreOf(bus).connection.isClosed() ? await connectBus(settings) : bus;
      await createBusAdmin(owner).deprovision();
      await owner.close();
      await bus.close();
    },
  };
}

/** Messages still in the harness's work stream (a work queue: an acked message leaves it). */
export async function workLeft(h: Harness): Promise<number> {
  const jsm = await jetstreamManager(h.raw);
  return (await jsm.streams.info(`TARSY_WORK${h.streamSuffix}`)).state.messages;
}

export const now = () => new Date().toISOString();

export function executionRequested(
  overrides: Partial<ExecutionRequested> = {},
): ExecutionRequested {
  return {
    v: 1,
    session_id: "s-1",
    stage_id: "st-1",
    execution_id: `ex-${randomUUID()}`,
    kind: "investigation",
    agent_name: "KubernetesAgent",
    agent_index: 1,
    requested_at: now(),
    ...overrides,
  };
}

export function timelineCreated(sessionId: string, n: number): TimelineEventCreated {
  return {
    v: 1,
    type: "timeline_event.created",
    session_id: sessionId,
    stage_id: null,
    execution_id: null,
    event_id: `${sessionId}-ev-${n}`,
    sequence_number: n,
    event_type: "llm_response",
    status: "completed",
    content: `event ${n}`,
    metadata: null,
    timestamp: now(),
  };
}

export function sessionStatus(
  sessionId: string,
  status: SessionStatusEvent["status"],
): SessionStatusEvent {
  return { v: 1, type: "session.status", session_id: sessionId, status, timestamp: now() };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A TCP port nobody listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(),
      );
    });
  });
}

/** A private nats-server (JetStream on) for tests that stop servers or need auth. */
export function startNatsServer(port: number, storeDir: string, args: string[] = []): ChildProcess {
  return spawn(
    "/usr/sbin/nats-server",
    ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir, ...args],
    {
      stdio: "ignore",
    },
  );
}
