import { randomUUID } from "node:crypto";
import { natsTest } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import WebSocket from "ws";
import { CLOSE_SLOW_CONSUMER } from "../src/connection.ts";
import { connectClient, relayOn, timelineEvent, waitForEvents } from "./helpers.ts";

const test = natsTest;

describe("stream-relay robustness", () => {
  test("a stalled client is dropped with a close reason without delaying a healthy one", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, { sendBufferLimitBytes: 256 * 1024 });
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      const healthy = await connectClient(relay.url);
      const stalled = await connectClient(relay.url);
      for (const c of [healthy, stalled]) {
        c.send({ action: "subscribe", channel });
        await c.waitFor((f) => f.type === "subscription.confirmed");
      }
      stalled.ws.pause(); // stops reading its socket: the relay's send buffer for it grows
      const big = "y".repeat(60 * 1024);
      const started = Date.now();
      for (let i = 0; i < 200; i++) {
        await nats.bus.publish("timelineEventCreated", timelineEvent(session, big));
      }
      await waitForEvents(healthy, 200, 15_000);
      const healthyMs = Date.now() - started;
      stalled.ws.resume();
      const closed = await stalled.closed;
      expect(closed.code).toBe(CLOSE_SLOW_CONSUMER);
      expect(closed.reason).toMatch(/too slow/);
      expect(stalled.eventIds().length).toBeLessThan(200);
      // The healthy client got all 12 MB while the stalled one was being dropped.
      expect(healthyMs).toBeLessThan(10_000);
      await healthy.close();
    } finally {
      await relay.close();
    }
  });

  test("malformed frames get an error frame and the connection stays usable", async ({ nats }) => {
    const relay = await relayOn(nats.bus);
    try {
      const client = await connectClient(relay.url);
      client.sendRaw("{not json");
      expect(await client.waitFor((f) => f.type === "error")).toMatchObject({
        code: "invalid_json",
      });
      const n = client.frames.length;
      client.send({ action: "subscribe", channel: "session:../../etc" });
      expect(await client.waitFor((f) => f.type === "error", 5_000, n)).toMatchObject({
        code: "invalid_action",
        message: expect.stringMatching(/channel/),
      });
      const m = client.frames.length;
      client.send({ action: "explode" });
      await client.waitFor((f) => f.type === "error", 5_000, m);
      client.send({ action: "ping" });
      await client.waitFor((f) => f.type === "pong");
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
      await client.close();
    } finally {
      await relay.close();
    }
  });

  test("a frame over the size limit closes the connection with 1009", async ({ nats }) => {
    const relay = await relayOn(nats.bus, { maxFrameBytes: 1024 });
    try {
      const client = await connectClient(relay.url);
      client.sendRaw(JSON.stringify({ action: "ping", pad: "z".repeat(4096) }));
      expect((await client.closed).code).toBe(1009);
    } finally {
      await relay.close();
    }
  });

  test("Origin is checked: foreign rejected, same-origin and listed origins accepted", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus);
    const listed = await relayOn(nats.bus, { allowedOrigins: ["https://tarsy.example.com"] });
    try {
      const host = new URL(relay.url).host;
      await expect(connectClient(relay.url, { Origin: "https://evil.example" })).rejects.toThrow(
        /403/,
      );
      const same = await connectClient(relay.url, { Origin: `http://${host}` });
      await same.close();
      const ok = await connectClient(listed.url, { Origin: "https://tarsy.example.com" });
      await ok.close();
      await expect(
        connectClient(listed.url, { Origin: `http://${new URL(listed.url).host}` }),
      ).rejects.toThrow(/403/);
    } finally {
      await relay.close();
      await listed.close();
    }
  });

  test("the auth proxy identity is recorded on the connection", async ({ nats }) => {
    const relay = await relayOn(nats.bus);
    try {
      const client = await connectClient(relay.url, {
        "X-Forwarded-User": "alice",
        "X-Forwarded-Email": "alice@example.com",
      });
      expect(client.frames[0]).toMatchObject({ type: "connection.established", user: "alice" });
      await client.close();
      const byEmail = await connectClient(relay.url, { "X-Forwarded-Email": "bob@example.com" });
      expect(byEmail.frames[0]).toMatchObject({ user: "bob@example.com" });
      await byEmail.close();
    } finally {
      await relay.close();
    }
  });

  test("subscriptions per connection are limited", async ({ nats }) => {
    const relay = await relayOn(nats.bus, { maxSubscriptions: 2 });
    try {
      const client = await connectClient(relay.url);
      for (let i = 0; i < 3; i++) client.send({ action: "subscribe", channel: `session:s${i}` });
      const error = await client.waitFor((f) => f.type === "subscription.error");
      expect(error).toMatchObject({
        channel: "session:s2",
        message: expect.stringMatching(/limit 2/),
      });
      await client.close();
    } finally {
      await relay.close();
    }
  });

  test("heartbeats drop a peer that stopped answering", async ({ nats }) => {
    const relay = await relayOn(nats.bus, { heartbeatMs: 150 });
    try {
      const dead = await connectClient(relay.url);
      const alive = await connectClient(relay.url);
      let pings = 0;
      alive.ws.on("ping", () => void pings++);
      dead.ws.pause(); // no pong comes back from a paused socket
      await expect.poll(() => relay.connections, { timeout: 5_000 }).toBe(1);
      // A ping is sent only to a peer that answered the last one: two more pings to the live
      // peer (at least one from a later heartbeat) mean its pongs were checked and it was kept.
      const pingsAtDrop = pings;
      await expect.poll(() => pings, { timeout: 5_000 }).toBeGreaterThanOrEqual(pingsAtDrop + 2);
      expect(relay.connections).toBe(1);
      expect(alive.ws.readyState).toBe(WebSocket.OPEN);
      await alive.close();
    } finally {
      await relay.close();
    }
  });

  test("a replica reads only watched channels and drops a feed with its last watcher", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus);
    try {
      const a = await connectClient(relay.url);
      const b = await connectClient(relay.url);
      a.send({ action: "subscribe", channel: "session:one" });
      b.send({ action: "subscribe", channel: "session:one" });
      b.send({ action: "subscribe", channel: "sessions" });
      await b.waitFor((f) => f.type === "subscription.confirmed" && f.channel === "sessions");
      await a.waitFor((f) => f.type === "subscription.confirmed");
      expect(relay.feeds).toBe(2);
      b.send({ action: "unsubscribe", channel: "session:one" });
      b.send({ action: "unsubscribe", channel: "sessions" });
      b.send({ action: "ping" });
      await b.waitFor((f) => f.type === "pong");
      expect(relay.feeds).toBe(1);
      await a.close();
      await expect.poll(() => relay.feeds, { timeout: 5_000 }).toBe(0);
      await b.close();
    } finally {
      await relay.close();
    }
  });
});
