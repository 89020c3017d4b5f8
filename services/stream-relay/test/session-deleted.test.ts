import { outboxPublisher } from "@tarsy/bus";
import { deleteSession, relayOutbox, transitionSessionStatus } from "@tarsy/db";
import { createTestDb, natsTest, type TestDb } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { ADMIN, ALICE, accessRelayOn, publishStatus, sessionIn } from "./access-rig.ts";
import { connectClient } from "./helpers.ts";

const test = natsTest;
let testDb: TestDb;
beforeAll(async () => {
  testDb = await createTestDb();
});
afterAll(async () => {
  await testDb?.cleanup();
});

describe("session.deleted on the WebSocket", () => {
  test("a deleted session's session.deleted reaches the sessions channel and its own, for those who may see it, and not others", async ({
    nats,
  }) => {
    const { relay } = await accessRelayOn(nats.bus, testDb.db);
    const a = await sessionIn(testDb.db, "alpha");
    const b = await sessionIn(testDb.db, "beta");
    for (const id of [a, b]) {
      await transitionSessionStatus(testDb.db.prisma, id, ["pending"], "in_progress");
      await transitionSessionStatus(testDb.db.prisma, id, ["in_progress"], "completed", {
        completedAt: new Date(),
      });
    }
    try {
      const alice = await connectClient(relay.url, ALICE);
      const admin = await connectClient(relay.url, ADMIN);
      for (const c of [alice, admin]) {
        for (const channel of ["sessions", `session:${a}`])
          c.send({ action: "subscribe", channel });
        await c.waitFor((f) => f.type === "subscription.confirmed" && f.channel === `session:${a}`);
      }
      // Deleted as the API and the retention job do: the row and its outbox message in one
      // transaction, then the outbox relayed to NATS (the session row is soft-deleted by then).
      for (const id of [b, a]) {
        const result = await deleteSession(testDb.db.prisma, id);
        expect(result.outcome).toBe("deleted");
      }
      expect(await relayOutbox(testDb.db.prisma, outboxPublisher(nats.bus))).toBeGreaterThan(0);

      const deletedOn = (channel: string, id: string) => (f: { type: string }) =>
        f.type === "session.deleted" &&
        "channel" in f &&
        f.channel === channel &&
        "session_id" in f &&
        f.session_id === id;
      const frame = await alice.waitFor(deletedOn("sessions", a));
      expect(frame).toMatchObject({
        type: "session.deleted",
        session_id: a,
        payload: { v: 1, type: "session.deleted", session_id: a },
      });
      await alice.waitFor(deletedOn(`session:${a}`, a));
      await admin.waitFor(deletedOn("sessions", b));
      await admin.waitFor(deletedOn("sessions", a));
      // A sentinel after both: alice has had everything the relay would send her by then.
      const sentinel = await sessionIn(testDb.db, "alpha");
      await publishStatus(nats.bus, sentinel);
      await alice.waitFor(
        (f) => f.type === "session.status" && "session_id" in f && f.session_id === sentinel,
      );
      expect(
        alice.frames.filter(
          (f) => f.type === "session.deleted" && "session_id" in f && f.session_id === b,
        ),
      ).toEqual([]);
      await alice.close();
      await admin.close();
    } finally {
      await relay.close();
    }
  });
});
