import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { type PersistentEvent, PersistentEventSchema } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { Naming } from "./naming.ts";
import { lastMessageOf, orderedConsumer, type ReadStart, readRange } from "./reader.ts";

/** One stored event of the events stream. */
export interface EventRecord {
  /** Stream sequence: the event id a WebSocket client acknowledges. */
  seq: number;
  /** Relative subject, e.g. `events.session.<id>`. */
  subject: string;
  /** When the stream stored it (ISO). */
  timestamp: string;
  payload: PersistentEvent;
}

export type EventReadOptions = ReadStart & {
  /** Relative subject of one channel, e.g. `events.session.<id>` or `events.sessions`. */
  subject: string;
};

export interface EventReplay {
  events: EventRecord[];
  /** True when further events of the subject exist after the last one returned. */
  more: boolean;
  /** Sequence to continue from (`afterSeq`), covering skipped unreadable messages too. */
  lastSeq: number;
}

/** A live, gap-free feed of one subject; iterate it, then close it. */
export interface EventFeed extends AsyncIterable<EventRecord> {
  close(): Promise<void>;
}

export interface EventReaderDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  naming: Naming;
  logger: Logger;
}

function toRecord(deps: EventReaderDeps, msg: JsMsg): EventRecord | undefined {
  const subject = deps.naming.relative(msg.subject) ?? msg.subject;
  let json: unknown;
  try {
    json = msg.json();
  } catch {
    json = undefined;
  }
  const parsed = PersistentEventSchema.safeParse(json);
  if (!parsed.success) {
    deps.logger.warn({ seq: msg.seq, subject }, "skipping an unreadable event");
    return undefined;
  }
  return { seq: msg.seq, subject, timestamp: msg.time.toISOString(), payload: parsed.data };
}

export async function lastEventSequence(deps: EventReaderDeps, subject: string): Promise<number> {
  const stream = deps.naming.stream("events");
  const last = await lastMessageOf(deps.jsm, stream, deps.naming.subject(subject));
  return last?.seq ?? 0;
}

/** Stored events of one subject from a start point, at most `limit`, without waiting. */
export async function replayEvents(
  deps: EventReaderDeps,
  options: EventReadOptions & { limit: number },
): Promise<EventReplay> {
  const stream = deps.naming.stream("events");
  const filter = deps.naming.subject(options.subject);
  const last = await lastMessageOf(deps.jsm, stream, filter);
  const range = await readRange(deps.js, stream, filter, options, options.limit, last);
  const events: EventRecord[] = [];
  for (const msg of range.messages) {
    const record = toRecord(deps, msg);
    if (record) events.push(record);
  }
  const lastSeq = range.messages.at(-1)?.seq ?? ("afterSeq" in options ? options.afterSeq : 0);
  return { events, more: range.more, lastSeq };
}

/**
 * Follows one subject from a start point: the stored events first, then new ones as they
 * are stored, in order, with no gap and no repeat (an ordered consumer).
 */
export async function followEvents(
  deps: EventReaderDeps,
  options: EventReadOptions,
): Promise<EventFeed> {
  const stream = deps.naming.stream("events");
  const consumer = await orderedConsumer(
    deps.js,
    stream,
    deps.naming.subject(options.subject),
    options,
  );
  const messages = await consumer.consume({ max_messages: 256 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await messages.close();
    await consumer.delete().catch(() => undefined);
  };
  async function* iterate(): AsyncGenerator<EventRecord> {
    try {
      for await (const msg of messages) {
        const record = toRecord(deps, msg);
        if (record) yield record;
      }
    } finally {
      await close();
    }
  }
  const iterator = iterate();
  return {
    [Symbol.asyncIterator]: () => iterator,
    close,
  };
}
