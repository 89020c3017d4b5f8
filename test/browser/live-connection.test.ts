import { randomUUID } from "node:crypto";
import type { TimelineEventCreated, WsEventFrame } from "@tarsy/contracts";
import { createTestBus, type TestBus } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLiveConnection, type LiveConnection } from "../../packages/dashboard/src/index.ts";
import { nodeSocket } from "../../packages/dashboard/testing/node-socket.ts";
import { createLogger } from "../../packages/runtime/src/index.ts";
import { busEventLog, type Relay, startRelay } from "../../services/stream-relay/src/index.ts";

/**
 * The dashboard's live connection (the module the page uses) against the real stream relay
 * over a real NATS: drops, catch-up from the last event id, overflow.
 */
const silent = createLogger({ service: "test", level: "silent" });

describe("LiveConnection against the stream relay", () => {
  let nats: TestBus;
  let relay: Relay;
  let url = "";
  const open: LiveConnection[] = [];

  beforeAll(async () => {
    nats = await createTestBus();
    relay = await startRelay(
      busEventLog(nats.bus, silent),
      {
        host: "127.0.0.1",
        port: 0,
        allowedOrigins: [],
        catchupLimit: 20,
        maxSubscriptions: 10,
        sendBufferLimitBytes: 4 * 1024 * 1024,
        slowClientGraceMs: 10_000,
        heartbeatMs: 30_000,
        maxFrameBytes: 64 * 1024,
      },
      silent,
    );
    url = relay.url;
  });
  afterAll(async () => {
    for (const live of open) live.close();
    await relay?.close();
    await nats?.cleanup();
  });

  let n = 0;
  const event = (sessionId: string): TimelineEventCreated => ({
    v: 1,
    type: "timeline_event.created",
    session_id: sessionId,
    stage_id: null,
    execution_id: null,
    event_id: randomUUID(),
    sequence_number: ++n,
    event_type: "llm_response",
    status: "completed",
    content: `e${n}`,
    metadata: null,
    timestamp: new Date().toISOString(),
  });
  const publish = async (sessionId: string, count: number) => {
    for (let i = 0; i < count; i++)
      await nats.bus.publish("timelineEventCreated", event(sessionId));
  };
  const until = async (check: () => boolean, what: string | (() => string), ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) {
        throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const connect = () => {
    const live = createLiveConnection({ url, createSocket: nodeSocket, minBackoffMs: 50 });
    open.push(live);
    return live;
  };

  it("sees every event exactly once, in order, across drops while events keep coming", async () => {
    const sessionId = `s-${randomUUID()}`;
    await publish(sessionId, 5);
    const live = connect();
    const seen: WsEventFrame[] = [];
    const statuses: string[] = [];
    live.onStatus((s) => statuses.push(s));
    live.subscribe(`session:${sessionId}`, { onEvent: (f) => seen.push(f) });
    await until(() => seen.length === 5, "the replay of 5 events");

    const publishing = (async () => {
      for (let i = 0; i < 6; i++) {
        await publish(sessionId, 5);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    live.dropForTesting(150);
    await new Promise((r) => setTimeout(r, 120));
    live.dropForTesting(100);
    await publishing;
    await until(
      () => seen.length >= 35,
      () => `35 events (${seen.length} seen; statuses ${statuses.join(" → ")})`,
    );
    // One more event after all the others: once it is in, so is every frame the relay sent
    // before it (a duplicate from a catch-up included).
    await publish(sessionId, 1);
    const last = `e${n}`;
    const contentOf = (f: WsEventFrame) =>
      f.payload.type === "timeline_event.created" ? f.payload.content : "";
    await until(() => seen.some((f) => contentOf(f) === last), "the last event");

    const contents = seen.map(contentOf);
    expect(new Set(contents).size).toBe(36);
    expect(seen).toHaveLength(36);
    const ids = seen.map((f) => f.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(statuses.filter((s) => s === "reconnecting").length).toBeGreaterThanOrEqual(1);
    expect(live.status).toBe("open");
  });

  it("reports an overflow when more was missed than the relay replays", async () => {
    const sessionId = `s-${randomUUID()}`;
    const live = connect();
    const seen: number[] = [];
    let overflows = 0;
    live.subscribe(`session:${sessionId}`, {
      onEvent: (f) => seen.push(f.id),
      onOverflow: () => overflows++,
    });
    await until(() => live.status === "open", "open");
    await publish(sessionId, 2);
    await until(() => seen.length === 2, "2 live events");
    live.dropForTesting(1_000);
    await until(() => live.status === "reconnecting", "the drop");
    await publish(sessionId, 30); // over the relay's catch-up limit of 20
    await until(() => overflows === 1, "the overflow");
    await publish(sessionId, 1);
    await until(() => seen.length === 3, "the next live event");
    expect(seen[2]).toBeGreaterThan(seen[1] ?? 0);
  });
});
