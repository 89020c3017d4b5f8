/**
 * Raw costs of the parts one hop is made of, measured in the same run as the hops: a JetStream
 * publish until a pull consumer has the message, a Postgres transaction of the shape the
 * services write (insert a row, update it, commit), and starting a process (`node -e 0`).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Sql } from "postgres";

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

export async function natsPublishToConsume(natsUrl: string, n: number): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  const jsm = await jetstreamManager(nc);
  const name = `BENCH_RAW_${randomBytes(3).toString("hex").toUpperCase()}`;
  const subject = `${name.toLowerCase()}.work`;
  await jsm.streams.add({ name, subjects: [subject] });
  await jsm.consumers.add(name, { durable_name: "raw", ack_policy: AckPolicy.Explicit });
  const js = jetstream(nc);
  const consumer = await js.consumers.get(name, "raw");
  const messages = await consumer.consume({ max_messages: 1 });
  const samples: number[] = [];
  try {
    const iterator = messages[Symbol.asyncIterator]();
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await js.publish(subject, new TextEncoder().encode(String(i)));
      const next = await iterator.next();
      samples.push(performance.now() - started);
      next.value?.ack();
    }
  } finally {
    messages.stop();
    await jsm.streams.delete(name);
    await nc.close();
  }
  return median(samples);
}

export async function postgresTransaction(sql: Sql, n: number): Promise<number> {
  await sql`CREATE TEMP TABLE IF NOT EXISTS bench_raw (id serial PRIMARY KEY, status text, at timestamptz)`;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await sql.begin(async (tx) => {
      const [row] = await tx<{ id: number }[]>`
        INSERT INTO bench_raw (status, at) VALUES ('pending', now()) RETURNING id`;
      await tx`UPDATE bench_raw SET status = 'active' WHERE id = ${row?.id ?? 0}`;
    });
    samples.push(performance.now() - started);
  }
  return median(samples);
}

export async function processSpawn(n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await new Promise((done) => spawn(process.execPath, ["-e", "0"]).once("exit", done));
    samples.push(performance.now() - started);
  }
  return median(samples);
}
