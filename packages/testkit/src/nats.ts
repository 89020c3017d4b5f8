import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { type Bus, type BusOptions, connectBus, deprovision } from "@tarsy/bus";
import { createLogger, type Logger } from "@tarsy/runtime";
import { test as base } from "vitest";

export const natsUrl = (): string => process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** A bus of its own for one test: unique subject prefix and stream suffix, streams provisioned. */
export interface TestBus {
  bus: Bus;
  /** e.g. `t3f9a1c2b`. */
  prefix: string;
  /** e.g. `_T3F9A1C2B`. */
  streamSuffix: string;
  url: string;
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
export async function workStored(bus: Bus, subject: string): Promise<number> {
  const jsm = await jetstreamManager(bus.connection);
  const absolute = bus.subject(subject);
  const info = await jsm.streams.info(bus.streamName("work"), { subjects_filter: absolute });
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
  const others: Bus[] = [];
  try {
    if (!skipProvision) await bus.provision();
  } catch (err) {
    await bus.close();
    throw err;
  }
  return {
    bus,
    prefix,
    streamSuffix,
    url,
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
      try {
        if (bus.connection.isClosed()) {
          const admin = await connectBus({ ...settings, name: `test-${id}-cleanup` });
          await deprovision(admin).finally(() => admin.close());
        } else {
          await deprovision(bus);
        }
      } finally {
        await bus.close();
      }
    },
  };
}

/** `test` with a `nats` fixture: a provisioned bus of the test's own, cleaned up after it. */
export const natsTest = base.extend<{ nats: TestBus }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  nats: async ({}, use) => {
    const testBus = await createTestBus();
    try {
      await use(testBus);
    } finally {
      await testBus.cleanup();
    }
  },
});
