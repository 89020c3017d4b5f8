import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { DEAD_LETTER_WILDCARD, type DeadLetter, DeadLetterSchema } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { BusNotFoundError, BusPublishError } from "./errors.ts";
import type { Naming } from "./naming.ts";
import type { PublishResult } from "./publish.ts";
import { readRange } from "./reader.ts";

export interface DeadLetterRecord {
  /** Sequence in the dead-letter stream: the id to redrive or discard. */
  seq: number;
  letter: DeadLetter;
}

export interface DeadLetterPage {
  items: DeadLetterRecord[];
  more: boolean;
}

export interface DeadLetterDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  naming: Naming;
  logger: Logger;
}

export async function listDeadLetters(
  deps: DeadLetterDeps,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<DeadLetterPage> {
  const stream = deps.naming.stream("dlq");
  const info = await deps.jsm.streams.info(stream);
  const last =
    info.state.messages > 0
      ? { seq: info.state.last_seq, time: new Date(info.state.last_ts) }
      : undefined;
  const range = await readRange(
    deps.js,
    stream,
    deps.naming.subject(DEAD_LETTER_WILDCARD),
    { afterSeq: options.afterSeq ?? 0 },
    options.limit ?? 100,
    last,
  );
  const items: DeadLetterRecord[] = [];
  for (const msg of range.messages) {
    const parsed = DeadLetterSchema.safeParse(safeJson(msg.string()));
    if (parsed.success) items.push({ seq: msg.seq, letter: parsed.data });
    else deps.logger.warn({ seq: msg.seq }, "skipping an unreadable dead letter");
  }
  return { items, more: range.more };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function getDeadLetter(deps: DeadLetterDeps, seq: number): Promise<DeadLetter> {
  const stream = deps.naming.stream("dlq");
  const stored = await deps.jsm.streams.getMessage(stream, { seq }).catch(() => null);
  if (!stored) throw new BusNotFoundError(`no dead letter ${seq} in ${stream}`);
  const parsed = DeadLetterSchema.safeParse(safeJson(new TextDecoder().decode(stored.data)));
  if (!parsed.success) throw new BusNotFoundError(`message ${seq} of ${stream} is no dead letter`);
  return parsed.data;
}

/**
 * Publishes a dead letter's original body to its original subject again, then removes it
 * from the dead-letter stream. Redriving the same letter twice publishes it once.
 */
export async function redriveDeadLetter(deps: DeadLetterDeps, seq: number): Promise<PublishResult> {
  const letter = await getDeadLetter(deps, seq);
  const stream = deps.naming.stream("dlq");
  const subject = deps.naming.subject(letter.original_subject);
  let result: PublishResult;
  try {
    const ack = await deps.js.publish(subject, letter.data, { msgID: `redrive:${stream}:${seq}` });
    result = { subject, seq: ack.seq, duplicate: ack.duplicate };
  } catch (err) {
    throw new BusPublishError(subject, { cause: err });
  }
  await deps.jsm.streams.deleteMessage(stream, seq, false);
  deps.logger.info({ deadLetterSeq: seq, subject, seq: result.seq }, "dead letter redriven");
  return result;
}

/** Removes a dead letter without redriving it. */
export async function discardDeadLetter(deps: DeadLetterDeps, seq: number): Promise<void> {
  const stream = deps.naming.stream("dlq");
  await getDeadLetter(deps, seq);
  await deps.jsm.streams.deleteMessage(stream, seq, false);
  deps.logger.info({ deadLetterSeq: seq }, "dead letter discarded");
}
