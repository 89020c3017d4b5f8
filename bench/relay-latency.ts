/**
 * stream-relay benchmark: publish → WebSocket client latency (p50/p99) and delivery throughput
 * for 1, 100 and 1,000 clients, against raw NATS subscribe latency measured in the same run.
 *
 *   pnpm --filter @tarsy/bench relay        (needs NATS on NATS_URL or 127.0.0.1:4222)
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { connect } from "@nats-io/transport-node";
import { connectBus, createBusAdmin } from "@tarsy/bus";
import { sessionEventsSubject } from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
import { busEventLog, startRelay } from "@tarsy/stream-relay";
import WebSocket from "ws";

const logger = createLogger({ service: "bench", level: "silent" });
const LATENCY_EVENTS = 400;
const LATENCY_RATE_PER_S = 200;
const BURST_EVENTS = 500;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

function event(sessionId: string) {
  return {
    v: 1 as const,
    type: "timeline_event.created" as const,
    session_id: sessionId,
    stage_id: null,
    execution_id: null,
    event_id: randomUUID(),
    sequence_number: 1,
    event_type: "llm_response" as const,
    status: "completed" as const,
    content: String(performance.now()),
    metadata: null,
    timestamp: new Date().toISOString(),
  };
}

const id = randomUUID().slice(0, 8);
const bus = await connectBus({
  servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  name: "bench-relay",
  logger,
  prefix: `bench${id}`,
  streamSuffix: `_BENCH${id.toUpperCase()}`,
});
const admin = createBusAdmin(bus);
await admin.provision();
const relay = await startRelay(
  busEventLog(bus, logger),
  {
    host: "127.0.0.1",
    port: 0,
    allowedOrigins: [],
    catchupLimit: 200,
    maxSubscriptions: 10,
    sendBufferLimitBytes: 64 * 1024 * 1024,
    slowClientGraceMs: 10_000,
    heartbeatMs: 60_000,
    maxFrameBytes: 64 * 1024,
  },
  logger,
);

async function rawBaseline(): Promise<number[]> {
  const session = randomUUID();
  const latencies: number[] = [];
  // A plain subscription of its own: what NATS alone costs, without the relay.
  const raw = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  const sub = raw.subscribe(bus.subject(sessionEventsSubject(session)), {
    callback: (_err, msg) => {
      const body = msg.json<{ content: string }>();
      latencies.push(performance.now() - Number(body.content));
    },
  });
  await raw.flush();
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    await bus.publish("timelineEventCreated", event(session));
    await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE_PER_S));
  }
  await new Promise((r) => setTimeout(r, 200));
  sub.unsubscribe();
  await raw.close();
  return latencies.sort((a, b) => a - b);
}

async function openClients(n: number, channel: string) {
  const clients: WebSocket[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(relay.url);
    clients.push(ws);
    ready.push(
      new Promise((resolve, reject) => {
        ws.on("message", function first(data) {
          const frame = JSON.parse(data.toString()) as { type: string };
          if (frame.type === "subscription.confirmed") {
            ws.off("message", first);
            resolve();
          }
        });
        ws.once("open", () => ws.send(JSON.stringify({ action: "subscribe", channel })));
        ws.once("error", reject);
      }),
    );
  }
  await Promise.all(ready);
  return clients;
}

async function relayRun(n: number) {
  const session = randomUUID();
  const clients = await openClients(n, `session:${session}`);
  const latencies: number[] = [];
  let delivered = 0;
  for (const ws of clients) {
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { payload?: { content?: string } };
      if (frame.payload?.content) {
        latencies.push(performance.now() - Number(frame.payload.content));
        delivered++;
      }
    });
  }
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    await bus.publish("timelineEventCreated", event(session));
    await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE_PER_S));
  }
  const waitAll = async (target: number) => {
    const deadline = Date.now() + 60_000;
    while (delivered < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };
  await waitAll(LATENCY_EVENTS * n);
  const sorted = [...latencies].sort((a, b) => a - b);

  // Throughput: a burst, timed from the first publish until every client has every event
  // (clients only count frames here, so the figure is the relay's, not the clients' parsing).
  for (const ws of clients) {
    ws.removeAllListeners("message");
    ws.on("message", () => {
      delivered++;
    });
  }
  delivered = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: BURST_EVENTS }, () => bus.publish("timelineEventCreated", event(session))),
  );
  await waitAll(BURST_EVENTS * n);
  const seconds = (performance.now() - started) / 1000;
  for (const ws of clients) ws.terminate();
  return { sorted, deliveries: delivered, seconds };
}

console.log("stream-relay benchmark (one process: publisher, relay and clients)\n");
const raw = await rawBaseline();
console.log(
  `raw NATS subscribe      p50 ${fmt(pct(raw, 50))}  p99 ${fmt(pct(raw, 99))}  (${raw.length} msgs)`,
);
for (const n of [1, 100, 1000]) {
  const { sorted, deliveries, seconds } = await relayRun(n);
  console.log(
    `relay, ${String(n).padStart(4)} client(s)  p50 ${fmt(pct(sorted, 50))}  p99 ${fmt(pct(sorted, 99))}` +
      `  burst ${BURST_EVENTS} events → ${deliveries} deliveries in ${seconds.toFixed(2)} s` +
      ` = ${Math.round(deliveries / seconds).toLocaleString("en-US")} frames/s`,
  );
}
await relay.close();
await admin.deprovision();
await bus.close();
process.exit(0);
