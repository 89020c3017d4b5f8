import { randomUUID } from "node:crypto";
import { WsClientActionSchema } from "@tarsy/contracts";
import { natsTest } from "@tarsy/testkit";
import fc from "fast-check";
import { describe, expect } from "vitest";
import WebSocket from "ws";
import {
  connectClient,
  publishEvents,
  relayOn,
  type TestClient,
  waitForEvents,
} from "./helpers.ts";

const test = natsTest;

/** Close codes the relay documents for a bad frame: unsupported, invalid UTF-8, policy, too big. */
const DOCUMENTED_CLOSE_CODES = [1003, 1007, 1008, 1009];
const MAX_FRAME_BYTES = 4 * 1024;

/** One frame as sent on the wire. */
type WireFrame =
  | { kind: "text"; text: string }
  | { kind: "binary"; bytes: Uint8Array }
  /** Bytes sent as a text frame: may be invalid UTF-8. */
  | { kind: "raw-text"; bytes: Uint8Array };

const channel = fc.oneof(
  fc.constant("sessions"),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/).map((id) => `session:${id}`),
);
const validAction = fc.oneof(
  fc.record({ action: fc.constantFrom("subscribe", "unsubscribe"), channel }),
  fc.record({
    action: fc.constant("catchup"),
    channel,
    last_event_id: fc.oneof(fc.nat(1_000), fc.constant(Number.MAX_SAFE_INTEGER)),
  }),
  fc.constant({ action: "ping" }),
);

/** Near-misses: a valid action with one field dropped, renamed, retyped or out of range. */
const nearMissValue = fc.oneof(
  fc.constant(null),
  fc.constant(-1),
  fc.constant(1.5),
  fc.constant(1e308),
  fc.constant(-0.5),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.constant(""),
  fc.constant("5"),
  fc.constant("session:"),
  fc.constant("session:a/b"),
  fc.constant("SESSIONS"),
  fc.constant(`session:${"x".repeat(129)}`),
  fc.constant("session:ü"),
  fc.constant([]),
  fc.constant({}),
  fc.boolean(),
  fc.string({ unit: "grapheme", maxLength: 20 }),
);
const nearMiss = fc
  .tuple(validAction, fc.constantFrom("drop", "set", "rename-action", "case"), nearMissValue)
  .map(([action, how, value]) => {
    const copy: Record<string, unknown> = { ...action };
    const keys = Object.keys(copy);
    const key = keys[Math.floor(Math.abs(JSON.stringify(value ?? 0).length * 7) % keys.length)];
    if (!key) return copy;
    if (how === "drop") delete copy[key];
    else if (how === "set") copy[key] = value;
    else if (how === "rename-action") copy.action = `${String(copy.action)}x`;
    else copy.action = String(copy.action).toUpperCase();
    return copy;
  });

/** Integers too long for a double, written as raw JSON text. */
const hugeLastEventId = fc
  .tuple(channel, fc.stringMatching(/^[1-9][0-9]{16,40}$/))
  .map(([ch, digits]) => `{"action":"catchup","channel":"${ch}","last_event_id":${digits}}`);

const wireFrame: fc.Arbitrary<WireFrame> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }).map((text) => ({ kind: "text", text }) as const),
  fc.string({ unit: "grapheme", maxLength: 200 }).map((text) => ({ kind: "text", text }) as const),
  fc.json({ maxDepth: 3 }).map((text) => ({ kind: "text", text }) as const),
  nearMiss.map((a) => ({ kind: "text", text: JSON.stringify(a) }) as const),
  validAction.map((a) => ({ kind: "text", text: JSON.stringify(a) }) as const),
  hugeLastEventId.map((text) => ({ kind: "text", text }) as const),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: "binary", bytes }) as const),
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((bytes) => ({ kind: "raw-text", bytes }) as const),
  fc
    .integer({ min: MAX_FRAME_BYTES + 1, max: MAX_FRAME_BYTES * 4 })
    .map((n) => ({ kind: "text", text: `{"action":"ping","pad":"${"z".repeat(n)}"}` }) as const),
);

/** Whether the relay must treat the frame as an error (the protocol's own schema decides). */
function isBad(frame: WireFrame): boolean {
  if (frame.kind !== "text") return true;
  if (Buffer.byteLength(frame.text) > MAX_FRAME_BYTES) return true;
  try {
    return !WsClientActionSchema.safeParse(JSON.parse(frame.text)).success;
  } catch {
    return true;
  }
}

function sendWire(client: TestClient, frame: WireFrame): void {
  if (frame.kind === "text") client.ws.send(frame.text);
  else if (frame.kind === "binary") client.ws.send(frame.bytes, { binary: true });
  else client.ws.send(Buffer.from(frame.bytes), { binary: false });
}

/** Sends the frame then a ping; resolves with the frames answered before the pong, or the close. */
async function exchange(
  client: TestClient,
  frame: WireFrame,
): Promise<{ closed: { code: number } } | { answered: TestClient["frames"] }> {
  const from = client.frames.length;
  sendWire(client, frame);
  if (client.ws.readyState === WebSocket.OPEN) client.send({ action: "ping" });
  const outcome = await Promise.race([
    client.closed.then((closed) => ({ closed })),
    client.waitFor((f) => f.type === "pong", 10_000, from).then(() => null),
  ]);
  if (outcome) return outcome;
  return { answered: client.frames.slice(from) };
}

describe("stream-relay WebSocket frame fuzz", () => {
  test("every bad frame gets an error frame or a documented close; the relay keeps serving", async ({
    nats,
  }) => {
    const relay = await relayOn(nats.bus, {
      maxFrameBytes: MAX_FRAME_BYTES,
      // Many frames per second on purpose: the parser is under test here, not the rate limit.
      controlRatePerSec: 100_000,
      controlBurst: 1_000,
    });
    let client = await connectClient(relay.url);
    let closes = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(wireFrame, { minLength: 1, maxLength: 4 }), async (frames) => {
          for (const frame of frames) {
            if (client.ws.readyState !== WebSocket.OPEN) client = await connectClient(relay.url);
            const result = await exchange(client, frame);
            if ("closed" in result) {
              closes++;
              expect(DOCUMENTED_CLOSE_CODES).toContain(result.closed.code);
              expect(isBad(frame)).toBe(true);
              continue;
            }
            if (isBad(frame)) {
              expect(result.answered.filter((f) => f.type === "error").length).toBe(1);
            } else {
              expect(result.answered.filter((f) => f.type === "error")).toEqual([]);
            }
          }
        }),
        { numRuns: 300, interruptAfterTimeLimit: 25_000, seed: 20261124 },
      );
      expect(closes).toBeGreaterThan(0);
      await client.close();

      // A fresh, well-behaved client afterwards receives events normally.
      const health = await fetch(new URL("/health", relay.url.replace(/^ws/, "http")));
      expect(health.status).toBe(200);
      const fresh = await connectClient(relay.url);
      const session = randomUUID();
      fresh.send({ action: "subscribe", channel: `session:${session}` });
      await fresh.waitFor((f) => f.type === "subscription.confirmed");
      const seqs = await publishEvents(nats.bus, session, 5);
      await waitForEvents(fresh, 5);
      expect(fresh.eventIds()).toEqual(seqs);
      expect(fresh.frames.filter((f) => f.type === "error")).toEqual([]);
      await fresh.close();
    } finally {
      await client.close();
      await relay.close();
    }
  }, 60_000);
});
