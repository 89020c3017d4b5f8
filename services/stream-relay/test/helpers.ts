import { randomUUID } from "node:crypto";
import type { Bus } from "@tarsy/bus";
import type { TimelineEventCreated } from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
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

export { connectClient, type TestClient, waitForEvents } from "@tarsy/testkit";
