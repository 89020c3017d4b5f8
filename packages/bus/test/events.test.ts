import { jetstream } from "@nats-io/jetstream";
import { sessionEventsSubject } from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import type { EventRecord } from "../src/index.ts";
import { type Harness, harness, sessionStatus, sleep, timelineCreated } from "./support.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Publishes n timeline events of `a` with events of `b` (and the global list) in between. */
async function interleaved(bus: Harness["bus"], n: number): Promise<number[]> {
  const seqsOfA: number[] = [];
  for (let i = 1; i <= n; i++) {
    const [stored] = await bus.publish("timelineEventCreated", timelineCreated("a", i));
    seqsOfA.push(stored!.seq);
    await bus.publish("timelineEventCreated", timelineCreated("b", i));
    if (i % 3 === 0) await bus.publish("sessionStatus", sessionStatus(`c${i}`, "pending"));
  }
  return seqsOfA;
}

describe("events stream reading", () => {
  it("replays exactly the later events of one subject from a sequence", async () => {
    h = await harness();
    const seqs = await interleaved(h.bus, 10);
    const from = seqs[3]!; // the 4th event of session a
    const replay = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: from,
      limit: 100,
    });
    expect(replay.events.map((e) => e.seq)).toEqual(seqs.slice(4));
    expect(
      replay.events.map(
        (e) => e.payload.type === "timeline_event.created" && e.payload.sequence_number,
      ),
    ).toEqual([5, 6, 7, 8, 9, 10]);
    expect(replay.events.every((e) => e.subject === sessionEventsSubject("a"))).toBe(true);
    expect(replay.more).toBe(false);
    expect(replay.lastSeq).toBe(seqs[9]);
    expect(Date.parse(replay.events[0]!.timestamp)).toBeGreaterThan(Date.now() - 60_000);

    expect(await h.admin.lastSequence(sessionEventsSubject("a"))).toBe(seqs[9]);
    const atEnd = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: seqs[9]!,
      limit: 5,
    });
    expect(atEnd).toEqual({ events: [], more: false, lastSeq: seqs[9] });
    const unknown = await h.bus.replayEvents({
      subject: sessionEventsSubject("zzz"),
      afterSeq: 0,
      limit: 5,
    });
    expect(unknown.events).toEqual([]);
  });

  it("bounds a replay and says when more exists", async () => {
    h = await harness();
    const seqs = await interleaved(h.bus, 7);
    const first = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: 0,
      limit: 3,
    });
    expect(first.events.map((e) => e.seq)).toEqual(seqs.slice(0, 3));
    expect(first.more).toBe(true);
    const second = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: first.lastSeq,
      limit: 3,
    });
    expect(second.events.map((e) => e.seq)).toEqual(seqs.slice(3, 6));
    expect(second.more).toBe(true);
    const third = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: second.lastSeq,
      limit: 3,
    });
    expect(third.events.map((e) => e.seq)).toEqual(seqs.slice(6));
    expect(third.more).toBe(false);
    const exact = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: seqs[3]!,
      limit: 3,
    });
    expect(exact.events.map((e) => e.seq)).toEqual(seqs.slice(4, 7));
    expect(exact.more).toBe(false);
  });

  it("replays from a start time", async () => {
    h = await harness();
    await interleaved(h.bus, 3);
    await sleep(50);
    const cut = new Date();
    await sleep(50);
    const [late] = await h.bus.publish("timelineEventCreated", timelineCreated("a", 4));
    const replay = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      startTime: cut,
      limit: 10,
    });
    expect(replay.events.map((e) => e.seq)).toEqual([late!.seq]);
    const none = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      startTime: new Date(),
      limit: 10,
    });
    expect(none.events).toEqual([]);
  });

  it("follows a subject from a replayed sequence with no gap and no repeat while others publish", async () => {
    h = await harness();
    await interleaved(h.bus, 5);
    const replay = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: 0,
      limit: 3,
    });
    expect(replay.more).toBe(true);

    // A second connection keeps publishing to both sessions while we switch to live.
    const producer = await h.another();
    const total = 60;
    const publishing = (async () => {
      for (let i = 6; i <= total; i++) {
        await producer.publish("timelineEventCreated", timelineCreated("a", i));
        await producer.publish("timelineEventCreated", timelineCreated("b", i));
      }
    })();

    const feed = await h.bus.followEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: replay.lastSeq,
    });
    const live: EventRecord[] = [];
    for await (const event of feed) {
      live.push(event);
      if (
        event.payload.type === "timeline_event.created" &&
        event.payload.sequence_number === total
      )
        break;
    }
    await publishing;
    await feed.close();

    const numbers = [...replay.events, ...live].map((e) =>
      e.payload.type === "timeline_event.created" ? e.payload.sequence_number : -1,
    );
    expect(numbers).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const seqs = [...replay.events, ...live].map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(total);
    expect(live.every((e) => e.subject === sessionEventsSubject("a"))).toBe(true);
  });

  it("skips unreadable events in a replay but moves past them", async () => {
    h = await harness();
    await h.bus.publish("timelineEventCreated", timelineCreated("a", 1));
    const js = jetstream(h.raw);
    const bad = await js.publish(`${h.prefix}.${sessionEventsSubject("a")}`, "{}");
    await h.bus.publish("timelineEventCreated", timelineCreated("a", 2));
    const replay = await h.bus.replayEvents({
      subject: sessionEventsSubject("a"),
      afterSeq: 0,
      limit: 2,
    });
    expect(replay.events.map((e) => e.seq)).toEqual([1]);
    expect(replay.lastSeq).toBe(bad.seq);
    expect(replay.more).toBe(true);
  });
});
