/**
 * Transactional outbox. A row is written in the same transaction as the rows a NATS message
 * announces, so the database and the message can never disagree: if the transaction commits
 * the message will be published (at least once; the Nats-Msg-Id from the catalog makes a
 * repeat a no-op within the stream's duplicate window), and if it rolls back nothing is.
 * Call `relayOutbox` right after the commit for low latency; `startOutboxRelay` polls for
 * whatever a crash left behind.
 */
import { MESSAGES, type PayloadOf, type PersistentMessageKey } from "@tarsy/contracts";
import type { DbClient, PrismaClient } from "./client.ts";
import { InvalidOutboxPayloadError } from "./errors.ts";
import type { DbLogger } from "./logger.ts";

export interface OutboxEntry<K extends PersistentMessageKey = PersistentMessageKey> {
  readonly id: bigint;
  readonly key: K;
  readonly payload: PayloadOf<K>;
  readonly msgId: string;
}

/** Publishes one message (the bus's typed publish); throws when it was not stored. */
export type OutboxPublisher = (entry: OutboxEntry) => Promise<void>;

function isPersistentKey(key: string): key is PersistentMessageKey {
  return key in MESSAGES && MESSAGES[key as PersistentMessageKey].transport === "jetstream";
}

/** Adds a message to the outbox, validated by its contract schema. Use inside the transaction. */
export async function enqueueOutbox<K extends PersistentMessageKey>(
  client: DbClient,
  key: K,
  payload: PayloadOf<K>,
): Promise<OutboxEntry<K>> {
  const def = MESSAGES[key];
  const parsed = def.schema.safeParse(payload);
  if (!parsed.success) {
    throw new InvalidOutboxPayloadError(`outbox ${key}: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  const data = parsed.data as PayloadOf<K>;
  const msgId = (def.msgId as (p: PayloadOf<K>) => string)(data);
  const row = await client.outboxMessage.create({
    data: { messageKey: key, payload: data as object, msgId },
    select: { id: true },
  });
  return { id: row.id, key, payload: data, msgId };
}

export interface RelayOptions {
  readonly batchSize?: number;
  readonly logger?: DbLogger;
}

/** Serializes relay passes across processes: events of one session must stay in order. */
const RELAY_LOCK_KEY = 0x7a5_0b0c;

/**
 * Publishes unpublished outbox rows in id order and marks them published. One pass runs at a
 * time across all relays (a transaction-level advisory lock; others wait their turn), so the
 * messages of one session — written in order under its session lock — are published in that
 * order. Stops at the first failure (the row keeps its place, with the error and attempt
 * count) so nothing overtakes it. Returns how many were published.
 */
export async function relayOutbox(
  prisma: PrismaClient,
  publish: OutboxPublisher,
  options: RelayOptions = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 100;
  let total = 0;
  for (;;) {
    const { published, more } = await prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${RELAY_LOCK_KEY})`;
      const rows = await tx.$queryRaw<
        { id: bigint; message_key: string; payload: unknown; msg_id: string }[]
      >`SELECT id, message_key, payload, msg_id FROM outbox_messages
        WHERE published_at IS NULL ORDER BY id LIMIT ${batchSize} FOR UPDATE`;
      const done: bigint[] = [];
      let failed = false;
      for (const row of rows) {
        if (!isPersistentKey(row.message_key)) {
          await tx.outboxMessage.update({
            where: { id: row.id },
            data: {
              attempts: { increment: 1 },
              lastError: `unknown message key ${row.message_key}`,
            },
          });
          continue;
        }
        try {
          await publish({
            id: row.id,
            key: row.message_key,
            payload: row.payload as PayloadOf<PersistentMessageKey>,
            msgId: row.msg_id,
          });
          done.push(row.id);
        } catch (error) {
          options.logger?.warn(
            { err: error, outbox_id: String(row.id), message_key: row.message_key },
            "outbox publish failed; will retry",
          );
          await tx.outboxMessage.update({
            where: { id: row.id },
            data: { attempts: { increment: 1 }, lastError: String(error) },
          });
          failed = true;
          break;
        }
      }
      if (done.length > 0) {
        await tx.outboxMessage.updateMany({
          where: { id: { in: done } },
          data: { publishedAt: new Date(), attempts: { increment: 1 } },
        });
      }
      return { published: done.length, more: !failed && rows.length === batchSize };
    });
    total += published;
    if (!more) return total;
  }
}

/** Deletes published rows older than `olderThan`. Returns how many were deleted. */
export async function purgePublishedOutbox(client: DbClient, olderThan: Date): Promise<number> {
  const { count } = await client.outboxMessage.deleteMany({
    where: { publishedAt: { lt: olderThan } },
  });
  return count;
}

export interface OutboxRelay {
  /** Runs a relay pass now (e.g. right after a commit); passes never overlap. */
  kick(): Promise<void>;
  stop(): Promise<void>;
}

/** Polls the outbox every `intervalMs` (default 1 s) until stopped. */
export function startOutboxRelay(
  prisma: PrismaClient,
  publish: OutboxPublisher,
  options: RelayOptions & { readonly intervalMs?: number } = {},
): OutboxRelay {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const pass = (): Promise<void> => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        await relayOutbox(prisma, publish, options);
      } catch (error) {
        options.logger?.error({ err: error }, "outbox relay pass failed");
      }
    });
    return running;
  };
  const timer = setInterval(() => void pass(), options.intervalMs ?? 1000);
  timer.unref();
  return {
    kick: pass,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
