import { randomUUID } from "node:crypto";
import { newApiToken } from "@tarsy/authz";
import type { Bus } from "@tarsy/bus";
import type { WsServerFrame } from "@tarsy/contracts";
import { createApiToken, listAudit, revokeApiToken } from "@tarsy/db";
import { createTestDb, natsTest, type TestDb } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { CLOSE_ACCESS_UNAVAILABLE } from "../src/connection.ts";
import {
  ADMIN,
  ALICE,
  accessRelayOn,
  authorization,
  publishStatus,
  refusedUpgrade,
  sessionIn,
} from "./access-rig.ts";
import { connectClient, publishEvents, type TestClient } from "./helpers.ts";

const test = natsTest;
let testDb: TestDb;
beforeAll(async () => {
  testDb = await createTestDb();
});
afterAll(async () => {
  await testDb?.cleanup();
});

/** Session ids named by every frame the client received (events and chunks). */
const sessionsSeen = (client: TestClient) =>
  new Set(client.frames.flatMap((f) => ("session_id" in f ? [f.session_id] : [])));

const confirmed = (client: TestClient, channel: string) =>
  client.waitFor((f) => f.type === "subscription.confirmed" && f.channel === channel);

/** Subscribes to each channel and waits for every confirmation. */
async function subscribeAll(client: TestClient, channels: string[]): Promise<void> {
  for (const channel of channels) client.send({ action: "subscribe", channel });
  for (const channel of channels) await confirmed(client, channel);
}

/** A frame on `channel` about `session` (of type `type`, when given). */
const about =
  (channel: string, session: string, type?: string) =>
  (f: WsServerFrame): boolean =>
    "channel" in f &&
    f.channel === channel &&
    "session_id" in f &&
    f.session_id === session &&
    (type === undefined || f.type === type);

/** Frames on one channel, as the client received them. */
const framesOn = (client: TestClient, channel: string) =>
  client.frames.filter((f) => "channel" in f && f.channel === channel).map((f) => f.type);

/** Everything the relay queued for the client before the pong is in: a ping, then its pong. */
async function drained(client: TestClient): Promise<void> {
  const from = client.frames.length;
  client.send({ action: "ping" });
  await client.waitFor((f) => f.type === "pong", 5_000, from);
}

/** A live stream chunk of one session's last event (never stored, never replayed). */
function publishChunk(bus: Bus, sessionId: string, delta: string): void {
  bus.publishTransient("streamChunk", {
    v: 1,
    type: "stream.chunk",
    session_id: sessionId,
    stage_id: null,
    execution_id: null,
    event_id: randomUUID(),
    delta,
    timestamp: new Date().toISOString(),
  });
}

const chunkOf = (session: string, delta: string) => (f: WsServerFrame) =>
  f.type === "stream.chunk" && f.session_id === session && f.payload.delta === delta;

async function activity(bus: Bus, a: string, b: string) {
  // B first, then A's sentinels: once A's arrive, B's frames have passed the same feeds.
  await publishStatus(bus, b);
  const bEvents = await publishEvents(bus, b, 3);
  for (const delta of ["b1 ", "b2 ", "b-last"]) publishChunk(bus, b, delta);
  await publishStatus(bus, a);
  const aEvents = await publishEvents(bus, a, 2);
  publishChunk(bus, a, "a-last");
  await bus.flush();
  return { aEvents, bEvents };
}

describe("stream-relay authorization", () => {
  test("a user of project A, subscribed to everything, learns nothing about B (statuses, events, stream chunks), live or on catch-up; an admin sees both", async ({
    nats,
  }) => {
    const { relay, sample } = await accessRelayOn(nats.bus, testDb.db);
    const a = await sessionIn(testDb.db, "alpha");
    const b = await sessionIn(testDb.db, "beta");
    const nowhere = randomUUID();
    const channels = ["sessions", `session:${a}`, `session:${b}`, `session:${nowhere}`];
    try {
      const alice = await connectClient(relay.url, ALICE);
      const admin = await connectClient(relay.url, ADMIN);
      expect(alice.frames[0]).toMatchObject({ type: "connection.established", user: "alice" });
      await subscribeAll(alice, channels);
      await subscribeAll(admin, channels);

      const { aEvents, bEvents } = await activity(nats.bus, a, b);
      // The admin, on the same feeds, receives B's frames: the relay decided about them for
      // alice in the same pass. Then alice's sentinels from A, then her queue is drained.
      await admin.waitFor(about("sessions", b, "session.status"));
      await admin.waitFor((f) => "id" in f && f.id === bEvents.at(-1));
      await admin.waitFor((f) => "id" in f && f.id === aEvents.at(-1));
      await admin.waitFor(chunkOf(b, "b-last"));
      await admin.waitFor(chunkOf(a, "a-last"));
      await alice.waitFor(about("sessions", a, "session.status"));
      await alice.waitFor((f) => "id" in f && f.id === aEvents.at(-1));
      await alice.waitFor(chunkOf(a, "a-last"));
      await drained(alice);
      expect(sessionsSeen(alice)).toEqual(new Set([a]));
      // B's live chunks reached the admin and none reached alice.
      const chunks = (client: TestClient) =>
        client.frames.flatMap((f) =>
          f.type === "stream.chunk" ? [`${f.session_id}:${f.payload.delta}`] : [],
        );
      expect(chunks(alice)).toEqual([`${a}:a-last`]);
      expect(chunks(admin)).toEqual(expect.arrayContaining([`${b}:b1 `, `${b}:b-last`]));
      expect(alice.eventIds().filter((id) => bEvents.includes(id))).toEqual([]);
      // B's channel is answered exactly as a session that does not exist.
      expect(framesOn(alice, `session:${b}`)).toEqual(["subscription.confirmed"]);
      expect(framesOn(alice, `session:${nowhere}`)).toEqual(["subscription.confirmed"]);
      expect(sessionsSeen(admin)).toEqual(new Set([a, b]));

      // Catch-up from the start: every replayed frame comes before the confirmation.
      const later = await connectClient(relay.url, ALICE);
      for (const channel of channels) {
        later.send({ action: "catchup", channel, last_event_id: 0 });
      }
      for (const channel of channels) await confirmed(later, channel);
      expect(sessionsSeen(later)).toEqual(new Set([a]));
      expect(later.eventIds()).toEqual(expect.arrayContaining(aEvents));
      expect(framesOn(later, `session:${b}`)).toEqual(framesOn(later, `session:${nowhere}`));

      const adminLater = await connectClient(relay.url, ADMIN);
      adminLater.send({ action: "catchup", channel: "sessions", last_event_id: 0 });
      await confirmed(adminLater, "sessions");
      expect(sessionsSeen(adminLater)).toEqual(new Set([a, b]));

      expect(await sample("tarsy_ws_frames_filtered_total", "reason", "forbidden")).toBeGreaterThan(
        0,
      );
      for (const c of [alice, admin, later, adminLater]) await c.close();
    } finally {
      await relay.close();
    }
  });

  test("spoofed identity headers from an untrusted address, or nobody, are refused with a 401 and audited", async ({
    nats,
  }) => {
    const started = Date.now() - 1_000;
    const { relay, sample } = await accessRelayOn(
      nats.bus,
      testDb.db,
      authorization({ trusted_proxies: ["192.0.2.10"] }),
    );
    try {
      const spoofed = await refusedUpgrade(relay.url, ADMIN);
      expect(spoofed).toEqual({
        status: 401,
        body: { error: { code: "untrusted_identity", message: expect.stringMatching(/trusted/) } },
      });
      await expect(connectClient(relay.url, ALICE)).rejects.toThrow(/401/);
      const nobody = await refusedUpgrade(relay.url);
      expect(nobody).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
      expect(await sample("tarsy_ws_upgrades_rejected_total", "reason", "untrusted_identity")).toBe(
        2,
      );
      expect(relay.connections).toBe(0);
      // Each refusal is in the audit log: what, from where, when, why.
      const refusals = async () =>
        (await listAudit(testDb.db.prisma, { limit: 100, outcome: "denied" })).filter(
          (r) => r.path === "/api/v1/ws" && r.at.getTime() >= started,
        );
      await expect.poll(async () => (await refusals()).length).toBe(3);
      const rows = await refusals();
      for (const row of rows) {
        expect(row).toMatchObject({
          actor: "anonymous",
          action: "get",
          method: "GET",
          status: 401,
          remoteAddr: "127.0.0.1",
        });
        expect(Date.now() - row.at.getTime()).toBeLessThan(60_000);
      }
      expect(rows.map((r) => r.reason?.split(":")[0]).sort()).toEqual([
        "unauthorized",
        "untrusted_identity",
        "untrusted_identity",
      ]);
      expect(rows.find((r) => r.reason?.startsWith("untrusted_identity"))?.reason).toMatch(
        /x-forwarded-user.*127\.0\.0\.1, which is not a trusted proxy/,
      );
    } finally {
      await relay.close();
    }
  });

  test("an API token in the tarsy_token cookie or as a bearer opens a connection to its project; a revoked, expired or malformed one is a 401", async ({
    nats,
  }) => {
    const { relay } = await accessRelayOn(nats.bus, testDb.db);
    const a = await sessionIn(testDb.db, "alpha");
    const b = await sessionIn(testDb.db, "beta");
    const token = async (name: string, extra: { expiresAt?: Date; revoked?: boolean } = {}) => {
      const { token: value, hash } = newApiToken();
      const row = await createApiToken(testDb.db.prisma, {
        name,
        tokenHash: hash,
        project: "alpha",
        role: "role:alpha-reader",
        createdBy: "root",
        expiresAt: extra.expiresAt ?? null,
      });
      if (extra.revoked) await revokeApiToken(testDb.db.prisma, row.id, "root");
      return value;
    };
    try {
      const aEvents = await publishEvents(nats.bus, a, 2);
      await publishEvents(nats.bus, b, 2);
      const ci = await token("ci");
      const ways: Record<string, string>[] = [
        { Cookie: `theme=dark; tarsy_token=${ci}` },
        { Authorization: `Bearer ${ci}` },
      ];
      for (const headers of ways) {
        const client = await connectClient(relay.url, headers);
        expect(client.frames[0]).toMatchObject({
          type: "connection.established",
          user: "token:ci",
        });
        await subscribeAll(client, [`session:${a}`, `session:${b}`]);
        expect(client.eventIds()).toEqual(aEvents);
        expect(sessionsSeen(client)).toEqual(new Set([a]));
        await client.close();
      }

      const revoked = await token("old", { revoked: true });
      const expired = await token("gone", { expiresAt: new Date(Date.now() - 60_000) });
      const refusals: [Record<string, string>, string][] = [
        [{ Cookie: `tarsy_token=${revoked}` }, "token_revoked"],
        [{ Authorization: `Bearer ${expired}` }, "token_expired"],
        [{ Authorization: "Bearer tarsy_short" }, "invalid_token"],
        [{ Cookie: "tarsy_token=tarsy_short" }, "invalid_token"],
        [{ Authorization: `Bearer ${newApiToken().token}` }, "invalid_token"],
      ];
      for (const [headers, code] of refusals) {
        expect(await refusedUpgrade(relay.url, headers)).toMatchObject({
          status: 401,
          body: { error: { code } },
        });
      }
      expect(relay.connections).toBe(0);
    } finally {
      await relay.close();
    }
  });

  test("with authorization off, the relay refuses spoofed identity headers with a 401 and filters nothing", async ({
    nats,
  }) => {
    const { relay: untrusting, sample } = await accessRelayOn(
      nats.bus,
      testDb.db,
      authorization({ enabled: false, trusted_proxies: ["192.0.2.10"] }),
    );
    try {
      // Identity headers from an address that is not a trusted proxy: refused, as ingest-api does.
      expect(await refusedUpgrade(untrusting.url, ALICE)).toEqual({
        status: 401,
        body: {
          error: {
            code: "untrusted_identity",
            message: expect.stringMatching(/127\.0\.0\.1, which is not a trusted proxy/),
          },
        },
      });
      expect(await sample("tarsy_ws_upgrades_rejected_total", "reason", "untrusted_identity")).toBe(
        1,
      );
      // Nobody named: the one local user, let in.
      const anonymous = await connectClient(untrusting.url);
      expect(anonymous.frames[0]).toMatchObject({ type: "connection.established", user: null });
      await anonymous.close();
      expect(untrusting.connections).toBe(0);
    } finally {
      await untrusting.close();
    }
    const { relay } = await accessRelayOn(nats.bus, testDb.db, authorization({ enabled: false }));
    const a = await sessionIn(testDb.db, "alpha");
    const b = await sessionIn(testDb.db, "beta");
    try {
      // From a trusted proxy the user is recorded, and nothing is filtered.
      const client = await connectClient(relay.url, ALICE);
      expect(client.frames[0]).toMatchObject({ type: "connection.established", user: "alice" });
      const anonymous = await connectClient(relay.url);
      expect(anonymous.frames[0]).toMatchObject({ user: null });
      await subscribeAll(client, ["sessions", `session:${b}`, `session:${randomUUID()}`]);
      await publishStatus(nats.bus, b);
      await publishStatus(nats.bus, a);
      const bEvents = await publishEvents(nats.bus, b, 2);
      await client.waitFor((f) => "id" in f && f.id === bEvents.at(-1));
      expect(sessionsSeen(client)).toEqual(new Set([a, b]));
      await client.close();
      await anonymous.close();
    } finally {
      await relay.close();
    }
  });

  test("fails closed: when a session's project cannot be read, the client is closed with 1013, not served", async ({
    nats,
  }) => {
    const own = await createTestDb();
    const { relay, sample } = await accessRelayOn(nats.bus, own.db);
    try {
      const admin = await connectClient(relay.url, ADMIN);
      await subscribeAll(admin, ["sessions"]);
      const known = await sessionIn(own.db, "alpha");
      const unseen = await sessionIn(own.db, "alpha");
      await publishStatus(nats.bus, known);
      await admin.waitFor(about("sessions", known));
      // The database goes away; the next session's project cannot be learned.
      await own.database.drop();
      await publishStatus(nats.bus, unseen);
      expect(await admin.closed).toEqual({
        code: CLOSE_ACCESS_UNAVAILABLE,
        reason: "authorization check unavailable; reconnect",
      });
      expect(sessionsSeen(admin)).toEqual(new Set([known]));
      // Nor is anyone let in while tokens cannot be checked.
      const { token } = newApiToken();
      expect(await refusedUpgrade(relay.url, { Authorization: `Bearer ${token}` })).toMatchObject({
        status: 503,
        body: { error: { code: "unavailable" } },
      });
      expect(await sample("tarsy_ws_upgrades_rejected_total", "reason", "unavailable")).toBe(1);
    } finally {
      await relay.close();
      await own.cleanup();
    }
  });
});
