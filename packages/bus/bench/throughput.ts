/**
 * Rough numbers for the bus on the local NATS server: `npx tsx packages/bus/bench/throughput.ts`.
 * Uses its own prefix and streams and deletes them at the end.
 */
import { randomBytes } from "node:crypto";
import {
  type ExecutionRequested,
  sessionEventsSubject,
  type TimelineEventCreated,
} from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
import { connectBus, createBusAdmin } from "../src/index.ts";

const id = randomBytes(4).toString("hex");
const bus = await connectBus({
  servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  name: "bus-bench",
  logger: createLogger({ service: "bench", level: "warn" }),
  prefix: `bench${id}`,
  streamSuffix: `_B${id.toUpperCase()}`,
  consumers: { runner: { maxAckPending: 10_000 } },
});
await createBusAdmin(bus).provision();

const at = () => performance.now();
const work = (i: number): ExecutionRequested => ({
  v: 1,
  session_id: "s",
  stage_id: null,
  execution_id: `ex-${i}`,
  kind: "investigation",
  agent_name: "A",
  agent_index: 1,
  requested_at: new Date().toISOString(),
});
const event = (session: string, n: number): TimelineEventCreated => ({
  v: 1,
  type: "timeline_event.created",
  session_id: session,
  stage_id: null,
  execution_id: null,
  event_id: `${session}-${n}`,
  sequence_number: n,
  event_type: "llm_response",
  status: "completed",
  content: "x".repeat(200),
  metadata: null,
  timestamp: new Date().toISOString(),
});
const results: Record<string, string> = {};

try {
  let t = at();
  const n = 2_000;
  for (let i = 0; i < n; i++) await bus.publish("executionRequested", work(i));
  results["publish, one at a time"] = `${Math.round(n / ((at() - t) / 1000))} msg/s`;

  t = at();
  for (let i = n; i < 3 * n; i += 64) {
    await Promise.all(
      Array.from({ length: 64 }, (_, k) => bus.publish("executionRequested", work(i + k))),
    );
  }
  results["publish, 64 in flight"] = `${Math.round((2 * n) / ((at() - t) / 1000))} msg/s`;

  for (const concurrency of [1, 16]) {
    const total = concurrency === 1 ? n : 2 * n;
    let handled = 0;
    let resolveDone: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    t = at();
    const worker = await bus.consume(
      "runner",
      {
        executionRequested: async () => {
          if (++handled === total) resolveDone();
        },
      },
      { concurrency, fetchExpiresMs: 1_000 },
    );
    await done;
    results[`consume + ack, concurrency ${concurrency}`] =
      `${Math.round(total / ((at() - t) / 1000))} msg/s`;
    await worker.stop();
  }

  // events: 100 sessions x 200 events, interleaved
  const sessions = 100;
  for (let k = 1; k <= 200; k++) {
    await Promise.all(
      Array.from({ length: sessions }, (_, s) =>
        bus.publish("timelineEventCreated", event(`s${s}`, k)),
      ),
    );
  }
  for (const round of ["first", "second"]) {
    t = at();
    const replay = await bus.replayEvents({
      subject: sessionEventsSubject("s42"),
      afterSeq: 0,
      limit: 200,
    });
    results[`replay 200 of one session in a 20k stream (${round})`] =
      `${(at() - t).toFixed(1)} ms (${replay.events.length} events, more=${replay.more})`;
  }

  const feed = await bus.followEvents({ subject: sessionEventsSubject("live"), fromNow: true });
  const latencies: number[] = [];
  const reading = (async () => {
    for await (const e of feed) {
      latencies.push(Date.now() - Date.parse(e.payload.timestamp));
      if (latencies.length === 500) break;
    }
  })();
  for (let k = 1; k <= 500; k++) {
    await bus.publish("timelineEventCreated", event("live", k));
  }
  await reading;
  await feed.close();
  latencies.sort((a, b) => a - b);
  results["publish → follower latency (500 events)"] =
    `p50 ${latencies[250]} ms, p99 ${latencies[495]} ms`;
} finally {
  await createBusAdmin(bus).deprovision();
  await bus.close();
}
for (const [name, value] of Object.entries(results)) console.log(`${name}: ${value}`);
