import {
  type Consumer,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type OrderedConsumerOptions,
} from "@nats-io/jetstream";
import { BusInvalidOptionsError } from "./errors.ts";

/** Where reading starts: after a stream sequence, at a time, or with the next new message. */
export type ReadStart = { afterSeq: number } | { startTime: Date | string } | { fromNow: true };

export interface RawRange {
  messages: JsMsg[];
  /** True when messages of the filter exist after the last one returned. */
  more: boolean;
}

const REPLAY_EXPIRES_MS = 5_000;

function orderedOptions(filter: string, start: ReadStart): Partial<OrderedConsumerOptions> {
  const base = { filter_subjects: filter, inactive_threshold: 30_000 };
  if ("afterSeq" in start) {
    if (!Number.isInteger(start.afterSeq) || start.afterSeq < 0) {
      throw new BusInvalidOptionsError("afterSeq must be a non-negative integer");
    }
    return {
      ...base,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: start.afterSeq + 1,
    };
  }
  if ("startTime" in start) {
    const time = new Date(start.startTime);
    if (Number.isNaN(time.getTime())) throw new BusInvalidOptionsError("startTime is invalid");
    return { ...base, opt_start_time: time.toISOString() };
  }
  return { ...base, deliver_policy: DeliverPolicy.New };
}

/** An ordered (gap-free, ephemeral) consumer of one filter subject. */
export function orderedConsumer(
  js: JetStreamClient,
  stream: string,
  filter: string,
  start: ReadStart,
): Promise<Consumer> {
  return js.consumers.get(stream, orderedOptions(filter, start));
}

/** Sequence and time of the last message on `subject` (no wildcards), or undefined. */
export async function lastMessageOf(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
): Promise<{ seq: number; time: Date } | undefined> {
  try {
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    return stored ? { seq: stored.seq, time: stored.time } : undefined;
  } catch (err) {
    if (err instanceof Error && /no message found|not found/i.test(err.message)) return undefined;
    throw err;
  }
}

/**
 * Reads at most `limit` stored messages of `filter` from `start`, never waiting for new ones:
 * `lastSeq` (the newest sequence of the filter now) tells where to stop.
 */
export async function readRange(
  js: JetStreamClient,
  stream: string,
  filter: string,
  start: ReadStart,
  limit: number,
  last: { seq: number; time: Date } | undefined,
): Promise<RawRange> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new BusInvalidOptionsError("limit must be a positive integer");
  }
  if (!last || "fromNow" in start) return { messages: [], more: false };
  if ("afterSeq" in start && last.seq <= start.afterSeq) return { messages: [], more: false };
  if ("startTime" in start && last.time < new Date(start.startTime)) {
    return { messages: [], more: false };
  }
  const consumer = await orderedConsumer(js, stream, filter, start);
  const messages: JsMsg[] = [];
  let more = false;
  try {
    const batch = await consumer.fetch({ max_messages: limit, expires: REPLAY_EXPIRES_MS });
    for await (const msg of batch) {
      messages.push(msg);
      const pending = msg.info.pending;
      if (messages.length >= limit) {
        more = pending > 0;
        break;
      }
      if (pending === 0 || msg.seq >= last.seq) break;
    }
    batch.stop();
  } finally {
    consumer.delete().catch(() => undefined);
  }
  return { messages, more };
}
