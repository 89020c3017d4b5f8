import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sessionEventsSubject } from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Bus,
  BusInvalidPayloadError,
  BusNotConnectedError,
  BusPublishError,
  connectBus,
  createBusAdmin,
  outboxPublisher,
  publishWithRetry,
} from "../src/index.ts";
import {
  captureLogger,
  eventually,
  freePort,
  sleep,
  startNatsServer,
  timelineCreated,
} from "./support.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A bus on a nats-server of the test's own, which the test can kill and start again. */
async function privateBus() {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "tarsy-nats-"));
  cleanups.push(() => rmSync(store, { recursive: true, force: true }));
  let server = startNatsServer(port, store);
  cleanups.push(() => void server.kill("SIGKILL"));
  const { logger } = captureLogger();
  const bus: Bus = await eventually(
    () =>
      connectBus({
        servers: `nats://127.0.0.1:${port}`,
        name: "after-commit-test",
        logger,
        prefix: "commit",
      }).catch(() => undefined),
    10_000,
    "private nats-server",
  );
  cleanups.push(() => bus.close());
  await createBusAdmin(bus).provision();
  return {
    bus,
    async kill() {
      server.kill("SIGKILL");
      await eventually(() => (bus.isConnected() ? undefined : true), 5_000, "disconnect noticed");
    },
    restart() {
      server = startNatsServer(port, store);
    },
  };
}

/** Event ids stored for session s1, in stream order. */
async function storedIds(bus: Bus): Promise<string[]> {
  const replay = await bus.replayEvents({
    subject: sessionEventsSubject("s1"),
    afterSeq: 0,
    limit: 10,
  });
  return replay.events.map((e) => (e.payload as { event_id: string }).event_id);
}

const message = (n: number) =>
  ({ key: "timelineEventCreated", payload: timelineCreated("s1", n) }) as const;

describe("publishWithRetry", () => {
  it("stores a message published while NATS is down once NATS is back, exactly once", async () => {
    const nats = await privateBus();
    await nats.bus.publishMessage(message(1));
    await nats.kill();
    const retries: number[] = [];
    const publishing = publishWithRetry(nats.bus, message(2), {
      retryForMs: 30_000,
      initialDelayMs: 100,
      maxDelayMs: 500,
      onRetry: (_err, attempt) => void retries.push(attempt),
    });
    await sleep(1_500);
    nats.restart();
    const results = await publishing;
    expect(results).toHaveLength(1);

    expect(await storedIds(nats.bus)).toEqual(["s1-ev-1", "s1-ev-2"]);
    expect(retries.length).toBeGreaterThan(0);
  }, 60_000);

  it("throws the last error once the retry time is up", async () => {
    const nats = await privateBus();
    await nats.kill();
    const started = Date.now();
    await expect(
      publishWithRetry(nats.bus, message(1), { retryForMs: 300, initialDelayMs: 100 }),
    ).rejects.toBeInstanceOf(BusPublishError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  }, 30_000);

  it("does not retry what no retry can fix", async () => {
    const nats = await privateBus();
    let attempts = 0;
    const counting = {
      publishMessage: (m: Parameters<Bus["publishMessage"]>[0]) => {
        attempts++;
        return nats.bus.publishMessage(m);
      },
    };
    const invalid = { key: "timelineEventCreated", payload: { v: 1 } } as never;
    await expect(publishWithRetry(counting, invalid, { retryForMs: 5_000 })).rejects.toBeInstanceOf(
      BusInvalidPayloadError,
    );
    await nats.bus.close();
    await expect(
      publishWithRetry(counting, message(1), { retryForMs: 5_000 }),
    ).rejects.toBeInstanceOf(BusNotConnectedError);
    expect(attempts).toBe(2);
  }, 30_000);
});

describe("outboxPublisher", () => {
  it("publishes a committed message, and fails at once while disconnected when told to", async () => {
    const nats = await privateBus();
    const lenient = outboxPublisher(nats.bus);
    const strict = outboxPublisher(nats.bus, { failWhenDisconnected: true, timeoutMs: 500 });
    await strict(message(1));
    await lenient(message(2));

    await nats.kill();
    const started = Date.now();
    await expect(strict(message(3))).rejects.toBeInstanceOf(BusNotConnectedError);
    expect(Date.now() - started).toBeLessThan(100);
    const buffered = lenient(message(3));
    nats.restart();
    await eventually(() => (nats.bus.isConnected() ? true : undefined), 15_000, "reconnect");
    await buffered.catch(() => lenient(message(3)));

    expect(await storedIds(nats.bus)).toEqual(["s1-ev-1", "s1-ev-2", "s1-ev-3"]);
  }, 60_000);

  it("gives up after its timeout", async () => {
    const stalled = {
      isConnected: () => true,
      publishMessage: () => new Promise<never>(() => {}),
    };
    await expect(outboxPublisher(stalled, { timeoutMs: 200 })(message(1))).rejects.toThrow(
      /no ack in 200 ms/,
    );
  });
});
