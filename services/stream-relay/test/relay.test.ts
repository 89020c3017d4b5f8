import { randomUUID } from "node:crypto";
import { natsTest } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import { connectClient, publishEvents, relayOn, timelineEvent, waitForEvents } from "./helpers.ts";

const test = natsTest;

describe("stream-relay over real NATS", () => {
  test("delivers a session's events live, in order, and nothing of other sessions", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus);
    const client = await connectClient(relay.url);
    try {
      const a = randomUUID();
      const b = randomUUID();
      client.send({ action: "subscribe", channel: `session:${a}` });
      await client.waitFor((f) => f.type === "subscription.confirmed");
      const [seqsA] = await Promise.all([
        publishEvents(nats.bus, a, 20),
        publishEvents(nats.bus, b, 5),
      ]);
      await waitForEvents(client, 20);
      expect(client.eventIds()).toEqual(seqsA);
      const sessions = client.frames.flatMap((f) => ("id" in f ? [f.session_id] : []));
      expect(new Set(sessions)).toEqual(new Set([a]));
    } finally {
      await client.close();
      await relay.close();
    }
  });

  test("replays a channel's earlier events on subscribe, then goes live", async ({ nats }) => {
    const relay = await relayOn(nats.bus);
    const session = randomUUID();
    const earlier = await publishEvents(nats.bus, session, 5);
    const client = await connectClient(relay.url);
    try {
      client.send({ action: "subscribe", channel: `session:${session}` });
      await client.waitFor((f) => f.type === "subscription.confirmed");
      expect(client.eventIds()).toEqual(earlier);
      const later = await publishEvents(nats.bus, session, 3);
      await waitForEvents(client, 8);
      expect(client.eventIds()).toEqual([...earlier, ...later]);
    } finally {
      await client.close();
      await relay.close();
    }
  });

  test("a client that reconnects to another replica catches up exactly the 150 missed events", async ({
    nats,
  }) => {
    const relayA = await relayOn(nats.bus);
    const relayB = await relayOn(await nats.connectAnother());
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      const first = await connectClient(relayA.url);
      first.send({ action: "subscribe", channel });
      await first.waitFor((f) => f.type === "subscription.confirmed");
      const seen = await publishEvents(nats.bus, session, 10);
      await waitForEvents(first, 10);
      const lastEventId = first.eventIds().at(-1) ?? 0;
      await first.close();

      const missed = await publishEvents(nats.bus, session, 150);

      const second = await connectClient(relayB.url);
      second.send({ action: "catchup", channel, last_event_id: lastEventId });
      await second.waitFor((f) => f.type === "subscription.confirmed");
      expect(second.eventIds()).toEqual(missed);
      const live = await publishEvents(nats.bus, session, 2);
      await waitForEvents(second, 152);
      expect(second.eventIds()).toEqual([...missed, ...live]);
      expect(seen.every((s) => s <= lastEventId)).toBe(true);
      await second.close();
    } finally {
      await relayA.close();
      await relayB.close();
    }
  });

  test("a catch-up past the limit answers catchup.overflow, then continues live", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, { catchupLimit: 50 });
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      await publishEvents(nats.bus, session, 51);
      const client = await connectClient(relay.url);
      client.send({ action: "catchup", channel, last_event_id: 0 });
      const overflow = await client.waitFor((f) => f.type === "catchup.overflow");
      expect(overflow).toMatchObject({ type: "catchup.overflow", channel, limit: 50 });
      await client.waitFor((f) => f.type === "subscription.confirmed");
      expect(client.eventIds()).toEqual([]);
      const live = await publishEvents(nats.bus, session, 3);
      await waitForEvents(client, 3);
      expect(client.eventIds()).toEqual(live);

      // Exactly at the limit is not an overflow.
      const other = randomUUID();
      const fifty = await publishEvents(nats.bus, other, 50);
      client.send({ action: "subscribe", channel: `session:${other}` });
      await client.waitFor(
        (f) => f.type === "subscription.confirmed" && f.channel === `session:${other}`,
      );
      expect(client.eventIds().slice(3)).toEqual(fifty);
      await client.close();
    } finally {
      await relay.close();
    }
  });

  test("stream chunks arrive live but are never replayed", async ({ nats }) => {
    const relay = await relayOn(nats.bus);
    const session = randomUUID();
    const channel = `session:${session}`;
    try {
      const watcher = await connectClient(relay.url);
      watcher.send({ action: "subscribe", channel });
      await watcher.waitFor((f) => f.type === "subscription.confirmed");
      const created = timelineEvent(session);
      await nats.bus.publish("timelineEventCreated", created);
      for (const delta of ["Pod ", "is ", "OOMKilled"]) {
        nats.bus.publishTransient("streamChunk", {
          v: 1,
          type: "stream.chunk",
          session_id: session,
          stage_id: null,
          execution_id: null,
          event_id: created.event_id,
          delta,
          timestamp: new Date().toISOString(),
        });
      }
      await nats.bus.flush();
      const chunkText = async () => {
        await watcher.waitFor((f) => f.type === "stream.chunk" && f.payload.delta === "OOMKilled");
        return watcher.frames
          .flatMap((f) => (f.type === "stream.chunk" ? [f.payload.delta] : []))
          .join("");
      };
      expect(await chunkText()).toBe("Pod is OOMKilled");

      const late = await connectClient(relay.url);
      late.send({ action: "subscribe", channel });
      await late.waitFor((f) => f.type === "subscription.confirmed");
      await waitForEvents(late, 1);
      expect(late.frames.some((f) => f.type === "stream.chunk")).toBe(false);
      await watcher.close();
      await late.close();
    } finally {
      await relay.close();
    }
  });

  test("a chunk of an event already completed is dropped (a runner streaming past a cancel)", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus);
    const session = randomUUID();
    const channel = `session:${session}`;
    const chunk = (eventId: string, delta: string) =>
      nats.bus.publishTransient("streamChunk", {
        v: 1,
        type: "stream.chunk",
        session_id: session,
        stage_id: null,
        execution_id: null,
        event_id: eventId,
        delta,
        timestamp: new Date().toISOString(),
      });
    try {
      const watcher = await connectClient(relay.url);
      watcher.send({ action: "subscribe", channel });
      await watcher.waitFor((f) => f.type === "subscription.confirmed");
      const cut = { ...timelineEvent(session), status: "streaming" as const };
      const open = { ...timelineEvent(session), status: "streaming" as const };
      await nats.bus.publish("timelineEventCreated", cut);
      await nats.bus.publish("timelineEventCreated", open);
      chunk(cut.event_id, "Pod ");
      await nats.bus.flush();
      await watcher.waitFor((f) => f.type === "stream.chunk" && f.payload.delta === "Pod ");
      const { sequence_number: _, ...rest } = cut;
      await nats.bus.publish("timelineEventCompleted", {
        ...rest,
        type: "timeline_event.completed",
        status: "cancelled",
      });
      await watcher.waitFor((f) => "id" in f && f.payload.type === "timeline_event.completed");
      // Chunks of one publisher arrive in order: once the open event's chunk is here, the stale
      // one before it has been handled.
      chunk(cut.event_id, "is OOMKilled");
      chunk(open.event_id, "still open");
      await nats.bus.flush();
      await watcher.waitFor((f) => f.type === "stream.chunk" && f.payload.delta === "still open");
      const deltas = watcher.frames.flatMap((f) =>
        f.type === "stream.chunk" ? [f.payload.delta] : [],
      );
      expect(deltas).toEqual(["Pod ", "still open"]);
      await watcher.close();
    } finally {
      await relay.close();
    }
  });

  test("replay-then-live has no gap and no duplicate under concurrent publishing", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, { catchupLimit: 10_000 });
    const session = randomUUID();
    try {
      const publishing = publishEvents(nats.bus, session, 300, 2);
      const clients = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 40 + i * 40));
        const client = await connectClient(relay.url);
        client.send({ action: "subscribe", channel: `session:${session}` });
        clients.push(client);
      }
      const all = await publishing;
      for (const client of clients) {
        await waitForEvents(client, 300);
        expect(client.eventIds()).toEqual(all);
        await client.close();
      }
    } finally {
      await relay.close();
    }
  });

  test("the sessions channel carries every session's status once", async ({ nats }) => {
    const relay = await relayOn(nats.bus);
    try {
      const client = await connectClient(relay.url);
      client.send({ action: "subscribe", channel: "sessions" });
      await client.waitFor((f) => f.type === "subscription.confirmed");
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids) {
        await nats.bus.publish("sessionStatus", {
          v: 1,
          type: "session.status",
          session_id: id,
          status: "in_progress",
          timestamp: new Date().toISOString(),
        });
      }
      await waitForEvents(client, 2);
      expect(client.frames.flatMap((f) => ("id" in f ? [f.session_id] : []))).toEqual(ids);
      await client.close();
    } finally {
      await relay.close();
    }
  });
});
