import { describe, expect } from "vitest";
import {
  createDb,
  enqueueOutbox,
  InvalidOutboxPayloadError,
  type OutboxEntry,
  publishOutboxNow,
  purgePublishedOutbox,
  relayOutbox,
  startOutboxRelay,
  withdrawUnpublishedSession,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("outbox", () => {
  test("the relay publishes committed messages in order, once", async ({ db }) => {
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await newSession(db.prisma));
    const published: OutboxEntry[] = [];
    expect(
      await relayOutbox(db.prisma, async (e) => void published.push(e), { batchSize: 2 }),
    ).toBe(5);
    expect(published.map((e) => e.payload)).toEqual(
      sessions.map((s) => expect.objectContaining({ session_id: s.id })),
    );
    expect(published.map((e) => e.msgId)).toEqual(sessions.map((s) => `session-submitted.${s.id}`));
    expect(await relayOutbox(db.prisma, async (e) => void published.push(e))).toBe(0);
    expect(published).toHaveLength(5);
  });

  test("a failed publish stops the pass and is retried later, keeping the order", async ({
    db,
  }) => {
    const a = await newSession(db.prisma);
    const b = await newSession(db.prisma);
    const published: string[] = [];
    let failNext = true;
    const publish = async (e: OutboxEntry) => {
      const id = String((e.payload as { session_id: string }).session_id);
      if (id === b.id && failNext) {
        failNext = false;
        throw new Error("nats: timeout");
      }
      published.push(id);
    };
    expect(await relayOutbox(db.prisma, publish)).toBe(1);
    const waiting = await db.prisma.outboxMessage.findFirstOrThrow({
      where: { publishedAt: null },
    });
    expect(waiting.attempts).toBe(1);
    expect(waiting.lastError).toMatch(/nats: timeout/);
    expect(await relayOutbox(db.prisma, publish)).toBe(1);
    expect(published).toEqual([a.id, b.id]);
  });

  test("concurrent relays publish every row once, in commit order", async ({ db, database }) => {
    const sessions = [];
    for (let i = 0; i < 30; i++) sessions.push(await newSession(db.prisma));
    const seen: string[] = [];
    const relays = [
      createDb({ url: database.url, poolSize: 2 }),
      createDb({ url: database.url, poolSize: 2 }),
      createDb({ url: database.url, poolSize: 2 }),
    ];
    try {
      const counts = await Promise.all(
        relays.map((r) =>
          relayOutbox(
            r.prisma,
            async (e) => {
              seen.push(e.msgId);
              await new Promise((resolve) => setTimeout(resolve, 2));
            },
            { batchSize: 5 },
          ),
        ),
      );
      expect(counts.reduce((x, y) => x + y, 0)).toBe(30);
    } finally {
      await Promise.all(relays.map((r) => r.close()));
    }
    expect(seen).toEqual(sessions.map((s) => `session-submitted.${s.id}`));
  });

  test("payloads are validated against the contract before they are stored", async ({ db }) => {
    await expect(
      enqueueOutbox(db.prisma, "sessionSubmitted", {
        v: 1,
        session_id: "",
        alert_type: "k",
        chain_id: "c",
        submitted_at: "yesterday",
      }),
    ).rejects.toBeInstanceOf(InvalidOutboxPayloadError);
    expect(await db.prisma.outboxMessage.count()).toBe(0);
  });

  test("a running relay publishes new rows when kicked and on its interval", async ({ db }) => {
    const published: string[] = [];
    const relay = startOutboxRelay(db.prisma, async (e) => void published.push(e.msgId), {
      intervalMs: 50,
    });
    try {
      const kicked = await newSession(db.prisma);
      await relay.kick();
      expect(published).toEqual([`session-submitted.${kicked.id}`]);
      const polled = await newSession(db.prisma);
      await expect
        .poll(() => published, { timeout: 5000 })
        .toEqual([`session-submitted.${kicked.id}`, `session-submitted.${polled.id}`]);
    } finally {
      await relay.stop();
    }
    expect(await purgePublishedOutbox(db.prisma, new Date(Date.now() + 1000))).toBe(2);
  });

  test("publishing right after the commit marks the rows, so the relay does not repeat them", async ({
    db,
  }) => {
    const a = await newSession(db.prisma);
    const b = await newSession(db.prisma);
    const c = await newSession(db.prisma);
    const published: string[] = [];
    const publish = async (e: OutboxEntry) => void published.push(e.msgId);
    const ids = [c, a].map((s) => `session-submitted.${s.id}`);
    await publishOutboxNow(db.prisma, publish, ids);
    // In commit order, whatever order they were named in.
    expect(published).toEqual([`session-submitted.${a.id}`, `session-submitted.${c.id}`]);
    await publishOutboxNow(db.prisma, publish, ids);
    expect(published).toHaveLength(2);
    expect(await relayOutbox(db.prisma, publish)).toBe(1);
    expect(published.at(-1)).toBe(`session-submitted.${b.id}`);
  });

  test("a session whose message is still unpublished can be withdrawn; a published one stands", async ({
    db,
  }) => {
    const unpublished = await newSession(db.prisma);
    const outboxIdOf = async (sessionId: string) =>
      (
        await db.prisma.outboxMessage.findFirstOrThrow({
          where: { msgId: `session-submitted.${sessionId}` },
        })
      ).id;
    const pendingId = await outboxIdOf(unpublished.id);
    expect(await withdrawUnpublishedSession(db.prisma, unpublished.id, pendingId)).toBe(true);
    expect(await db.prisma.alertSession.count({ where: { id: unpublished.id } })).toBe(0);

    const announced = await newSession(db.prisma);
    await relayOutbox(db.prisma, async () => {});
    const sentId = await outboxIdOf(announced.id);
    expect(await withdrawUnpublishedSession(db.prisma, announced.id, sentId)).toBe(false);
    expect(await db.prisma.alertSession.count({ where: { id: announced.id } })).toBe(1);
  });
});
