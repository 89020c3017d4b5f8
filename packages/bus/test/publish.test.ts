import { jetstreamManager } from "@nats-io/jetstream";
import {
  CANCEL_CONTROL_WILDCARD,
  SESSIONS_EVENTS_SUBJECT,
  type StreamChunk,
  sessionChunksSubject,
  sessionEventsSubject,
  WORK_SUBJECTS,
} from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { BusInvalidPayloadError } from "../src/index.ts";
import {
  eventually,
  executionRequested,
  type Harness,
  harness,
  now,
  sessionStatus,
} from "./support.ts";

const open: Harness[] = [];
async function fresh(): Promise<Harness> {
  const h = await harness();
  open.push(h);
  return h;
}
afterEach(async () => {
  for (const h of open.splice(0)) await h.cleanup();
});

async function storedCount(h: Harness, stream: "TARSY_WORK" | "TARSY_EVENTS", subject?: string) {
  const jsm = await jetstreamManager(h.raw);
  const info = await jsm.streams.info(`${stream}${h.streamSuffix}`, {
    subjects_filter: subject ?? ">",
  });
  return subject ? (info.state.subjects?.[subject] ?? 0) : info.state.messages;
}

/** The sequence of the last message a stream ever stored (0: none, even if since removed). */
async function lastStored(h: Harness, stream: "TARSY_WORK" | "TARSY_EVENTS") {
  const jsm = await jetstreamManager(h.raw);
  return (await jsm.streams.info(`${stream}${h.streamSuffix}`)).state.last_seq;
}

describe("publish", () => {
  it("stores a message once under a deterministic id and drops a repeated publish", async () => {
    const h = await fresh();
    const payload = executionRequested();
    const [first] = await h.bus.publish("executionRequested", payload);
    const [again] = await h.bus.publish("executionRequested", payload);

    expect(first).toEqual({
      subject: `${h.prefix}.${WORK_SUBJECTS.executionRequested}`,
      seq: 1,
      duplicate: false,
    });
    expect(again).toEqual({ ...first, duplicate: true });
    expect(await storedCount(h, "TARSY_WORK")).toBe(1);

    const jsm = await jetstreamManager(h.raw);
    const stored = await jsm.streams.getMessage(`TARSY_WORK${h.streamSuffix}`, { seq: 1 });
    expect(stored?.header.get("Nats-Msg-Id")).toBe(
      `${WORK_SUBJECTS.executionRequested}:execution-requested.${payload.execution_id}`,
    );
    expect(stored?.json()).toEqual(payload);
  });

  it("publishes a session status to the session's channel and the global list", async () => {
    const h = await fresh();
    const results = await h.bus.publish("sessionStatus", sessionStatus("abc", "in_progress"));
    expect(results.map((r) => r.subject)).toEqual([
      `${h.prefix}.${sessionEventsSubject("abc")}`,
      `${h.prefix}.${SESSIONS_EVENTS_SUBJECT}`,
    ]);
    expect(results.map((r) => r.seq)).toEqual([1, 2]);
  });

  it("rejects an invalid payload with a typed error and publishes nothing", async () => {
    const h = await fresh();
    const bad = { ...executionRequested(), agent_index: 0, kind: "poetry" };
    // @ts-expect-error the compiler rejects it too; the bus must reject it at run time
    const attempt = h.bus.publish("executionRequested", bad);
    await expect(attempt).rejects.toBeInstanceOf(BusInvalidPayloadError);
    await expect(attempt).rejects.toMatchObject({
      code: "bus_invalid_payload",
      messageKey: "executionRequested",
    });
    const error = (await attempt.catch((e: unknown) => e)) as BusInvalidPayloadError;
    expect(error.issues.join(" ")).toMatch(/agent_index/);
    expect(error.issues.join(" ")).toMatch(/kind/);
    expect(await storedCount(h, "TARSY_WORK")).toBe(0);

    expect(() =>
      // @ts-expect-error missing fields
      h.bus.publishTransient("streamChunk", { v: 1, session_id: "s" }),
    ).toThrow(BusInvalidPayloadError);
  });

  it("delivers valid transient messages of one session and drops invalid ones", async () => {
    const h = await fresh();
    const got: { delta: string; subject: string }[] = [];
    const sub = h.bus.subscribeTransient(
      "streamChunk",
      sessionChunksSubject("s1"),
      (chunk, meta) => {
        got.push({ delta: chunk.delta, subject: meta.subject });
      },
    );
    const chunk = (sessionId: string, delta: string): StreamChunk => ({
      v: 1,
      type: "stream.chunk",
      session_id: sessionId,
      stage_id: null,
      execution_id: "ex",
      event_id: "ev",
      delta,
      timestamp: now(),
    });
    await h.bus.flush();
    h.bus.publishTransient("streamChunk", chunk("s1", "Hel"));
    h.bus.publishTransient("streamChunk", chunk("s2", "other session"));
    h.raw.publish(`${h.prefix}.${sessionChunksSubject("s1")}`, '{"v":1,"delta":"no ids"}');
    h.raw.publish(`${h.prefix}.${sessionChunksSubject("s1")}`, "not json");
    h.bus.publishTransient("streamChunk", chunk("s1", "lo"));
    // One subscription gets its messages in publish order: once the last one is in, so is
    // everything published before it.
    await eventually(() => got.find((g) => g.delta === "lo"), 5_000, "the last chunk");
    expect(got).toEqual([
      { delta: "Hel", subject: sessionChunksSubject("s1") },
      { delta: "lo", subject: sessionChunksSubject("s1") },
    ]);
    sub.unsubscribe();
  });

  it("keeps two prefixes on one server apart", async () => {
    const a = await fresh();
    const b = await fresh();
    const seenByB: string[] = [];
    b.bus.subscribeTransient("cancelControl", CANCEL_CONTROL_WILDCARD, (p) => {
      seenByB.push(p.session_id);
    });
    const workerB = await b.bus.consume(
      "runner",
      {
        executionRequested: async (p) => {
          seenByB.push(p.execution_id);
        },
      },
      { fetchExpiresMs: 1_000 },
    );
    await b.bus.flush();

    await a.bus.publish("executionRequested", executionRequested());
    await a.bus.publish("timelineEventCreated", {
      v: 1,
      type: "timeline_event.created",
      session_id: "shared",
      stage_id: null,
      execution_id: null,
      event_id: "e1",
      sequence_number: 1,
      event_type: "llm_response",
      status: "completed",
      content: "hello",
      metadata: null,
      timestamp: now(),
    });
    a.bus.publishTransient("cancelControl", {
      v: 1,
      session_id: "shared",
      scope: "session",
      reason: "cancelled",
      timestamp: now(),
    });
    await a.bus.flush();
    // a's messages are routed by now (flushed, and publishes acked); B's own cancel, sent after
    // them, arrives behind anything of a's that B's subscription could have matched.
    b.bus.publishTransient("cancelControl", {
      v: 1,
      session_id: "b-own",
      scope: "session",
      reason: "cancelled",
      timestamp: now(),
    });
    await eventually(() => seenByB.find((id) => id === "b-own"), 5_000, "B's own cancel");

    expect(seenByB).toEqual(["b-own"]);
    expect(await storedCount(b, "TARSY_WORK")).toBe(0);
    expect(await lastStored(b, "TARSY_WORK")).toBe(0);
    expect(
      await b.bus.replayEvents({ subject: sessionEventsSubject("shared"), afterSeq: 0, limit: 10 }),
    ).toMatchObject({ events: [], more: false });
    expect(await b.admin.lastSequence(sessionEventsSubject("shared"))).toBe(0);
    expect(await a.admin.lastSequence(sessionEventsSubject("shared"))).toBe(1);
    expect(await storedCount(a, "TARSY_WORK")).toBe(1);
    await workerB.stop();
  });

  it("reports connection health", async () => {
    const h = await fresh();
    expect(h.bus.isConnected()).toBe(true);
    const health = await h.bus.health();
    expect(health.connected).toBe(true);
    expect(health.rttMs).toBeGreaterThanOrEqual(0);
    await h.bus.drain();
    expect(h.bus.isConnected()).toBe(false);
    expect((await h.bus.health()).connected).toBe(false);
    await expect(h.bus.publish("executionRequested", executionRequested())).rejects.toMatchObject({
      code: "bus_not_connected",
    });
  });
});
