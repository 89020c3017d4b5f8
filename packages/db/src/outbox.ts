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

/** One outbox row: its `{ key, payload }` pair stays typed (a switch over `key` narrows it). */
export type OutboxEntry<K extends PersistentMessageKey = PersistentMessageKey> = {
  [P in K]: {
    readonly id: bigint;
    readonly key: P;
    readonly payload: PayloadOf<P>;
    readonly msgId: string;
  };
}[K];

/** Publishes one message (the bus's typed publish); throws when it was not stored. */
export type OutboxPublisher = (entry: OutboxEntry) => Promise<void>;

function isPersistentKey(key: string): key is PersistentMessageKey {
  return key in MESSAGES && MESSAGES[key as PersistentMessageKey].transport === "jetstream";
}

/** An outbox row as an entry (its key already checked against the catalog). */
function entryOf(row: {
  id: bigint;
  key: PersistentMessageKey;
  payload: unknown;
  msgId: string;
}): OutboxEntry {
  return {
    id: row.id,
    key: row.key,
    payload: row.payload as PayloadOf<PersistentMessageKey>,
    msgId: row.msgId,
  } as OutboxEntry;
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
  return { id: row.id, key, payload: data, msgId } as OutboxEntry<K>;
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
          await publish(
            entryOf({ id: row.id, key: row.message_key, payload: row.payload, msgId: row.msg_id }),
          );
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

/**
 * Publishes one committed row now and marks it published (unless a relay already did):
 * the fast path right after a commit. Throws when the publish fails; the row stays for the
 * relay.
 */
export async function publishOutboxEntry(
  client: DbClient,
  publish: OutboxPublisher,
  entry: OutboxEntry,
): Promise<void> {
  await publish(entry);
  await client.outboxMessage.updateMany({
    where: { id: entry.id, publishedAt: null },
    data: { publishedAt: new Date(), attempts: { increment: 1 } },
  });
}

/**
 * `publishOutboxEntry` for the given rows (by msg id, in commit order, those still
 * unpublished). Throws on the first failure; that row and the rest stay for the relay.
 */
export async function publishOutboxNow(
  client: DbClient,
  publish: OutboxPublisher,
  msgIds: readonly string[],
): Promise<void> {
  const rows = await client.outboxMessage.findMany({
    where: { msgId: { in: [...msgIds] }, publishedAt: null },
    orderBy: { id: "asc" },
  });
  for (const row of rows) {
    if (!isPersistentKey(row.messageKey)) continue;
    const entry = { id: row.id, key: row.messageKey, payload: row.payload, msgId: row.msgId };
    await publishOutboxEntry(client, publish, entryOf(entry));
  }
}

/**
 * Withdraws a session whose `sessionSubmitted` message was not published: deletes the
 * outbox row only if still unpublished (waiting for a relay holding it), then the session.
 * Returns false when the message went out meanwhile (the session stands).
 */
export async function withdrawUnpublishedSession(
  prisma: PrismaClient,
  sessionId: string,
  outboxId: bigint,
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.outboxMessage.deleteMany({
      where: { id: outboxId, publishedAt: null },
    });
    if (count === 0) return false;
    await tx.alertSession.delete({ where: { id: sessionId } });
    return true;
  });
}

/**
 * Withdraws a chat message whose `chatSubmitted` was not published: its unpublished outbox
 * rows, the message, and the chat when this message created it (and nobody heard of it).
 * Returns false when the message went out meanwhile (it stands).
 */
export async function withdrawUnpublishedChatMessage(
  prisma: PrismaClient,
  input: { chatId: string; messageId: string; chatCreated: boolean },
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.outboxMessage.deleteMany({
      where: { msgId: `chat-submitted.${input.messageId}`, publishedAt: null },
    });
    if (count === 0) return false;
    await tx.outboxMessage.deleteMany({
      where: { publishedAt: null, msgId: `chat-user-message.${input.messageId}` },
    });
    const chatAnnounced = await tx.outboxMessage.deleteMany({
      where: { publishedAt: null, msgId: `chat-created.${input.chatId}` },
    });
    await tx.chatUserMessage.deleteMany({ where: { id: input.messageId } });
    // Keep a chat whose `chat.created` already went out; drop one nobody has heard of.
    if (input.chatCreated && chatAnnounced.count === 1) {
      const left = await tx.chatUserMessage.count({ where: { chatId: input.chatId } });
      if (left === 0) await tx.chat.deleteMany({ where: { id: input.chatId } });
    }
    return true;
  });
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
