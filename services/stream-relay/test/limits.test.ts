import { randomUUID } from "node:crypto";
import { natsTest } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import { DEFAULT_CONTROL_LIMITS } from "../src/admission.ts";
import { CLOSE_POLICY_VIOLATION } from "../src/connection.ts";
import {
  connectClient,
  publishEvents,
  relayOn,
  type TestClient,
  timelineEvent,
  waitForEvents,
} from "./helpers.ts";

const test = natsTest;
const { controlBurst, controlRatePerSec, controlViolationsBeforeClose } = DEFAULT_CONTROL_LIMITS;

/** The most messages the token bucket can admit in `ms`: the burst plus what the rate refilled. */
const admissible = (ms: number) => controlBurst + Math.ceil((controlRatePerSec * ms) / 1000);

/** Arrival time of every event frame a client receives, by event id. */
function arrivals(client: TestClient): Map<number, number> {
  const at = new Map<number, number>();
  client.ws.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as { id?: number };
    if (typeof frame.id === "number") at.set(frame.id, Date.now());
  });
  return at;
}

const errorsOf = (client: TestClient, code: string) =>
  client.frames.filter((f) => f.type === "error" && f.code === code);

describe("stream-relay per-client limits", () => {
  test("a flood of 10,000 subscribe/unsubscribe gets one error frame, then close 1008; others are not delayed", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, { maxSubscriptions: 100 });
    const session = randomUUID();
    try {
      const healthy = await connectClient(relay.url);
      const arrived = arrivals(healthy);
      healthy.send({ action: "subscribe", channel: `session:${session}` });
      await healthy.waitFor((f) => f.type === "subscription.confirmed");

      const flooder = await connectClient(relay.url);
      const floodStarted = Date.now();
      let maxPending = 0;
      const sampler = setInterval(() => {
        maxPending = Math.max(maxPending, relay.pendingActions);
      }, 1);
      for (let i = 0; i < 10_000; i++) {
        const channel = `session:flood-${i % 50}`;
        flooder.send({ action: i % 2 === 0 ? "subscribe" : "unsubscribe", channel });
      }
      // Events published while the flood is being handled reach the healthy client promptly.
      const published = new Map<number, number>();
      for (let i = 0; i < 20; i++) {
        const [result] = await nats.bus.publish("timelineEventCreated", timelineEvent(session));
        if (result) published.set(result.seq, Date.now());
        await new Promise((r) => setTimeout(r, 10));
      }
      const closed = await flooder.closed;
      const floodMs = Date.now() - floodStarted;
      clearInterval(sampler);
      expect(closed).toEqual({ code: CLOSE_POLICY_VIOLATION, reason: "rate limit exceeded" });
      expect(errorsOf(flooder, "rate_limited")).toHaveLength(1);
      // At most the burst (and what the rate refilled meanwhile) was ever worked on; what was
      // still queued at the close is dropped with the connection.
      const answered = flooder.frames.filter((f) => f.type === "subscription.confirmed").length;
      expect(answered).toBeLessThanOrEqual(admissible(floodMs));
      expect(maxPending).toBeLessThanOrEqual(controlBurst);

      await waitForEvents(healthy, 20);
      expect(healthy.eventIds()).toEqual([...published.keys()]);
      const delays = [...published].map(([seq, sentAt]) => (arrived.get(seq) ?? Infinity) - sentAt);
      expect(Math.max(...delays)).toBeLessThan(500);
      // The flooder's subscriptions were all dropped with it: only the healthy client's feed stays.
      await expect.poll(() => relay.feeds, { timeout: 5_000 }).toBe(1);
      await expect.poll(() => relay.pendingActions, { timeout: 5_000 }).toBe(0);
      await healthy.close();
    } finally {
      await relay.close();
    }
  });

  test("3,000 catch-ups from 0 send each event once and a bounded number of frames", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus);
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      const stored = await publishEvents(nats.bus, session, 150);
      const abuser = await connectClient(relay.url);
      const abuseStarted = Date.now();
      for (let i = 0; i < 3_000; i++) abuser.send({ action: "catchup", channel, last_event_id: 0 });
      // A well-behaved client doing one catch-up meanwhile is unaffected.
      const polite = await connectClient(relay.url);
      polite.send({ action: "catchup", channel, last_event_id: 0 });
      await polite.waitFor((f) => f.type === "subscription.confirmed");
      expect(polite.eventIds()).toEqual(stored);

      expect((await abuser.closed).code).toBe(CLOSE_POLICY_VIOLATION);
      const abuseMs = Date.now() - abuseStarted;
      // Without the limits this sent 21,016 frames. Now: no event twice, in order, plus at most
      // one answer per admitted request and one error frame (queued work ends with the close).
      const ids = abuser.eventIds();
      expect(ids).toEqual(stored.slice(0, ids.length));
      expect(abuser.frames.length).toBeLessThanOrEqual(1 + stored.length + admissible(abuseMs) + 1);
      expect(errorsOf(abuser, "rate_limited")).toHaveLength(1);

      const live = await publishEvents(nats.bus, session, 3);
      await waitForEvents(polite, stored.length + 3);
      expect(polite.eventIds()).toEqual([...stored, ...live]);
      expect(polite.frames.filter((f) => f.type === "error")).toEqual([]);
      await polite.close();
    } finally {
      await relay.close();
    }
  });

  test("with the rate limit out of the way, repeated catch-ups still never resend an event", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, {
      controlRatePerSec: 1_000_000,
      controlBurst: 10_000,
      catchupLimit: 200,
    });
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      const stored = await publishEvents(nats.bus, session, 150);
      const client = await connectClient(relay.url);
      for (let i = 0; i < 3_000; i++) client.send({ action: "catchup", channel, last_event_id: 0 });
      client.send({ action: "ping" });
      await client.waitFor((f) => f.type === "pong", 20_000);
      expect(client.eventIds()).toEqual(stored);
      const confirmations = client.frames.filter((f) => f.type === "subscription.confirmed");
      expect(confirmations.length).toBeGreaterThanOrEqual(1);
      // 1 connection frame + each event once + at most one answer per request + the pong.
      expect(client.frames.length).toBeLessThanOrEqual(1 + stored.length + 3_000 + 1);
      const live = await publishEvents(nats.bus, session, 2);
      await waitForEvents(client, stored.length + 2);
      expect(client.eventIds()).toEqual([...stored, ...live]);
      expect(client.ws.readyState).toBe(client.ws.OPEN);
      await client.close();
    } finally {
      await relay.close();
    }
  });

  test("catch-ups waiting per client are capped; past the cap an error frame answers", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, { maxPendingCatchups: 8 });
    try {
      const client = await connectClient(relay.url);
      const channels = Array.from({ length: 10 }, (_, i) => `session:cap-${i}`);
      for (const channel of channels) client.send({ action: "catchup", channel, last_event_id: 0 });
      client.send({ action: "ping" });
      await client.waitFor((f) => f.type === "pong");
      const confirmed = client.frames.filter((f) => f.type === "subscription.confirmed").length;
      const refused = errorsOf(client, "too_many_catchups");
      expect(confirmed).toBe(8);
      expect(refused).toHaveLength(2);
      expect(refused[0]).toMatchObject({ message: expect.stringMatching(/limit 8/) });
      // Once they are done, catch-ups are accepted again.
      client.send({ action: "catchup", channel: "session:cap-later", last_event_id: 0 });
      await client.waitFor(
        (f) => f.type === "subscription.confirmed" && f.channel === "session:cap-later",
      );
      await client.close();
    } finally {
      await relay.close();
    }
  });

  test("a client that stays under the rate is never limited", async ({ nats }) => {
    const relay = await relayOn(nats.bus, {
      controlRatePerSec: 50,
      controlBurst: 5,
      controlViolationsBeforeClose,
    });
    try {
      const client = await connectClient(relay.url);
      for (let i = 0; i < 15; i++) {
        client.send({ action: "ping" });
        await new Promise((r) => setTimeout(r, 25));
      }
      await expect
        .poll(() => client.frames.filter((f) => f.type === "pong").length, { timeout: 5_000 })
        .toBe(15);
      expect(client.frames.filter((f) => f.type === "error")).toEqual([]);
      await client.close();
    } finally {
      await relay.close();
    }
  });
});
