import { randomUUID } from "node:crypto";
import type { Bus } from "@tarsy/bus";
import type { TimelineEventCreated, WsServerFrame } from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
import WebSocket from "ws";
import { busEventLog } from "../src/bus-event-log.ts";
import { type Relay, type RelayOptions, startRelay } from "../src/server.ts";

export const silent = createLogger({
  service: "test",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

export function relayOptions(overrides: Partial<RelayOptions> = {}): RelayOptions {
  return {
    host: "127.0.0.1",
    port: 0,
    allowedOrigins: [],
    catchupLimit: 200,
    maxSubscriptions: 10,
    sendBufferLimitBytes: 4 * 1024 * 1024,
    slowClientGraceMs: 10_000,
    heartbeatMs: 30_000,
    maxFrameBytes: 64 * 1024,
    ...overrides,
  };
}

export function relayOn(bus: Bus, overrides: Partial<RelayOptions> = {}): Promise<Relay> {
  return startRelay(busEventLog(bus, silent), relayOptions(overrides), silent);
}

let counter = 0;
export function timelineEvent(sessionId: string, content = "x"): TimelineEventCreated {
  counter++;
  return {
    v: 1,
    type: "timeline_event.created",
    session_id: sessionId,
    stage_id: null,
    execution_id: null,
    event_id: randomUUID(),
    sequence_number: counter,
    event_type: "llm_response",
    status: "completed",
    content,
    metadata: null,
    timestamp: new Date().toISOString(),
  };
}

/** Publishes `n` timeline events to one session and returns their stream sequences in order. */
export async function publishEvents(
  bus: Bus,
  sessionId: string,
  n: number,
  paceMs = 0,
): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < n; i++) {
    if (paceMs > 0) await new Promise((r) => setTimeout(r, paceMs));
    const [result] = await bus.publish("timelineEventCreated", timelineEvent(sessionId, `e${i}`));
    if (!result) throw new Error("publish returned nothing");
    seqs.push(result.seq);
  }
  return seqs;
}

export interface TestClient {
  ws: WebSocket;
  frames: WsServerFrame[];
  send(action: unknown): void;
  sendRaw(text: string): void;
  /** Resolves with the first frame (from index `from`) matching, or rejects after `timeoutMs`. */
  waitFor(
    predicate: (f: WsServerFrame) => boolean,
    timeoutMs?: number,
    from?: number,
  ): Promise<WsServerFrame>;
  /** Event ids received, in order. */
  eventIds(): number[];
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export async function connectClient(
  url: string,
  headers: Record<string, string> = {},
): Promise<TestClient> {
  const ws = new WebSocket(url, { headers });
  const frames: WsServerFrame[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as WsServerFrame);
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const client: TestClient = {
    ws,
    frames,
    closed,
    send: (action) => ws.send(JSON.stringify(action)),
    sendRaw: (text) => ws.send(text),
    waitFor(predicate, timeoutMs = 5_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.slice(from).find(predicate);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching frame within ${timeoutMs} ms; got ${frames.length} frames`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    eventIds: () => frames.flatMap((f) => ("id" in f ? [f.id] : [])),
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
  await client.waitFor((f) => f.type === "connection.established");
  return client;
}

/** Waits until the client holds `count` event frames. */
export async function waitForEvents(client: TestClient, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (client.eventIds().length < count) {
    if (Date.now() > deadline) {
      throw new Error(`expected ${count} events, got ${client.eventIds().length}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
