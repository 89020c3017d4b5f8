import type { JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  MESSAGES,
  type PayloadOf,
  type PersistentMessageDef,
  type PersistentMessageKey,
  type TransientMessageDef,
  type TransientMessageKey,
} from "@tarsy/contracts";
import type { z } from "zod";
import { BusInvalidPayloadError, BusPublishError } from "./errors.ts";
import type { Naming } from "./naming.ts";

export interface PublishResult {
  /** Absolute subject the message was stored under. */
  subject: string;
  /** Stream sequence (of the earlier copy, when it was a duplicate). */
  seq: number;
  /** True when the stream dropped it as a repeat of a message with the same id. */
  duplicate: boolean;
}

/** A persistent message with its catalog key: the pair stays typed (`{ key, payload }`). */
export type PersistentMessage<K extends PersistentMessageKey = PersistentMessageKey> = {
  [P in K]: { readonly key: P; readonly payload: PayloadOf<P> };
}[K];

export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
}

/** Validates `payload` with the catalog schema of `key` (throws BusInvalidPayloadError). */
export function validatePayload<K extends keyof typeof MESSAGES>(
  key: K,
  payload: unknown,
): PayloadOf<K> {
  const result = MESSAGES[key].schema.safeParse(payload);
  if (!result.success) throw new BusInvalidPayloadError(key, formatIssues(result.error));
  return result.data as PayloadOf<K>;
}

/** The header value that lets the stream drop a repeated publish of the same message. */
export const msgIdFor = (relativeSubject: string, id: string): string => `${relativeSubject}:${id}`;

export async function publishPersistent<K extends PersistentMessageKey>(
  js: JetStreamClient,
  naming: Naming,
  key: K,
  payload: PayloadOf<K>,
): Promise<PublishResult[]> {
  const data = validatePayload(key, payload);
  const def = MESSAGES[key] as unknown as PersistentMessageDef;
  const body = JSON.stringify(data);
  const id = def.msgId(data);
  const results: PublishResult[] = [];
  for (const relative of def.subjects(data)) {
    const subject = naming.subject(relative);
    try {
      const ack = await js.publish(subject, body, { msgID: msgIdFor(relative, id) });
      results.push({ subject, seq: ack.seq, duplicate: ack.duplicate });
    } catch (err) {
      throw new BusPublishError(subject, { cause: err });
    }
  }
  return results;
}

export function publishCore<K extends TransientMessageKey>(
  nc: NatsConnection,
  naming: Naming,
  key: K,
  payload: PayloadOf<K>,
): string[] {
  const data = validatePayload(key, payload);
  const def = MESSAGES[key] as unknown as TransientMessageDef;
  const body = JSON.stringify(data);
  const subjects = def.subjects(data).map((relative) => naming.subject(relative));
  for (const subject of subjects) {
    try {
      nc.publish(subject, body);
    } catch (err) {
      throw new BusPublishError(subject, { cause: err });
    }
  }
  return subjects;
}
