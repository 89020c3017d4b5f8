import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  type Bus,
  type BusAdmin,
  BusNotConnectedError,
  type BusOptions,
  connectBus,
  createBusAdmin,
} from "@tarsy/bus";
import { createLogger, type Logger } from "@tarsy/runtime";

export const natsUrl = (): string => process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export type RawNatsConnection = NatsConnection;

/**
 * A plain NATS connection, for a test that acts like a foreign or buggy client (garbage
 * bodies, raw requests and subscriptions); services only ever get the typed bus.
 */
export function connectRawNats(url = natsUrl(), name = "test-raw"): Promise<RawNatsConnection> {
  return connect({ servers: url, name });
}

/** A bus of its own for one test: unique subject prefix and stream suffix, streams provisioned. */
export interface TestBus {
  bus: Bus;
  /** Provisioning, dead letters, backlogs and sequences of `bus`. */
  admin: BusAdmin;
  /** e.g. `t3f9a1c2b`. */
  prefix: string;
  /** e.g. `_T3F9A1C2B`. */
  streamSuffix: string;
  url: string;
  /**
   * A plain NATS connection to the same server (opened on first use, closed by `cleanup`),
   * for acting like a foreign or buggy client: garbage bodies, raw requests and subscriptions.
   */
  raw(): Promise<RawNatsConnection>;
  /** Another connection to the same prefix and streams (a second replica or process). */
  connectAnother(overrides?: Partial<BusOptions>): Promise<Bus>;
  /** Deletes the streams (and their consumers) and closes every connection. */
  cleanup(): Promise<void>;
}

export interface CreateTestBusOptions extends Partial<Omit<BusOptions, "prefix" | "streamSuffix">> {
  /** Skip `provision()`, default false. */
  skipProvision?: boolean;
}

/**
 * How many messages of one work subject (relative, e.g. `work.orchestrator.execution_finished`)
 * are still stored. TARSY_WORK is a work queue: a message leaves it when its consumer acks it,
 * so 0 after a publish means the consumer's handler has run to its end (or dead-lettered it).
 */
export async function workStored(nats: TestBus, subject: string): Promise<number> {
  const jsm = await jetstreamManager(await nats.raw());
  const absolute = nats.bus.subject(subject);
  const info = await jsm.streams.info(nats.bus.streamName("work"), { subjects_filter: absolute });
  return info.state.subjects?.[absolute] ?? 0;
}

function testLogger(): Logger {
  return createLogger({ service: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });
}

export async function createTestBus(options: CreateTestBusOptions = {}): Promise<TestBus> {
  const id = randomBytes(4).toString("hex");
  const prefix = `t${id}`;
  const streamSuffix = `_T${id.toUpperCase()}`;
  const url = natsUrl();
  const { skipProvision, ...rest } = options;
  const settings: BusOptions = {
    servers: url,
    name: `test-${id}`,
    logger: testLogger(),
    ...rest,
    prefix,
    streamSuffix,
  };
  const bus = await connectBus(settings);
  const admin = createBusAdmin(bus);
  const others: Bus[] = [];
  let raw: Promise<RawNatsConnection> | undefined;
  try {
    if (!skipProvision) await admin.provision();
  } catch (err) {
    await bus.close();
    throw err;
  }
  return {
    bus,
    admin,
    prefix,
    streamSuffix,
    url,
    raw() {
      raw ??= connectRawNats(url, `test-${id}-raw`);
      return raw;
    },
    async connectAnother(overrides = {}) {
      const other = await connectBus({
        ...settings,
        name: `test-${id}-${others.length + 2}`,
        ...overrides,
        prefix,
        streamSuffix,
      });
      others.push(other);
      return other;
    },
    async cleanup() {
      for (const other of others) await other.close().catch(() => undefined);
      if (raw) await (await raw).close().catch(() => undefined);
      try {
        await admin.deprovision().catch(async (err: unknown) => {
          if (!(err instanceof BusNotConnectedError)) throw err;
          // The test closed its bus: delete the streams over a connection of our own.
          const owner = await connectBus({ ...settings, name: `test-${id}-cleanup` });
          await createBusAdmin(owner)
            .deprovision()
            .finally(() => owner.close());
        });
      } finally {
        await bus.close();
      }
    },
  };
}
