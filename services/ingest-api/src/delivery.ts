import { BusNotConnectedError } from "@tarsy/bus";
import type { PersistentMessageKey } from "@tarsy/contracts";
import {
  type OutboxEntry,
  type OutboxPublisher,
  type PrismaClient,
  startOutboxRelay,
} from "@tarsy/db";
import type { IngestResources } from "./deps.ts";
import { withTimeout } from "./timeout.ts";

/**
 * Delivery of what a request stored: the rows and their outbox messages commit together
 * (packages/db), then this publishes the outbox right away. If NATS is down the request
 * withdraws what it stored (only while its message is still unpublished, under the row
 * lock the relay also takes), so the client's 503 means "nothing happened". A process that
 * dies between commit and publish leaves a row the background relay delivers later.
 */

export function busPublisher(deps: Pick<IngestResources, "bus" | "settings">): OutboxPublisher {
  const { bus } = deps;
  return async (entry) => {
    // A disconnected client would buffer the publish and send it after we gave up: fail now.
    if (!bus.isConnected()) throw new BusNotConnectedError("NATS is not connected");
    await withTimeout(
      bus.publish(entry.key, entry.payload as never),
      deps.settings.publishTimeoutMs,
      "NATS publish",
    );
  };
}

/** Publishes one committed outbox message now and marks it published. Throws on failure. */
export async function deliverEntry(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma">,
  entry: OutboxEntry,
): Promise<void> {
  await busPublisher(deps)(entry);
  await deps.prisma.outboxMessage.updateMany({
    where: { id: entry.id, publishedAt: null },
    data: { publishedAt: new Date(), attempts: { increment: 1 } },
  });
}

/**
 * Publishes the given outbox messages (by msg id, in commit order) right now and marks them
 * published. Throws on the first failure; the rest stay for the background relay.
 */
export async function deliverNow(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma">,
  msgIds: readonly string[],
): Promise<void> {
  const rows = await deps.prisma.outboxMessage.findMany({
    where: { msgId: { in: [...msgIds] }, publishedAt: null },
    orderBy: { id: "asc" },
  });
  for (const row of rows) {
    await deliverEntry(deps, {
      id: row.id,
      key: row.messageKey as PersistentMessageKey,
      payload: row.payload as never,
      msgId: row.msgId,
    });
  }
}

/** Starts the relay that publishes what a crashed request left in the outbox. */
export function startBackgroundRelay(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma" | "logger">,
  intervalMs: number,
) {
  return startOutboxRelay(deps.prisma, busPublisher(deps), { intervalMs, logger: deps.logger });
}

/**
 * Withdraws a session whose `sessionSubmitted` message was not published: deletes the
 * outbox row only if still unpublished (waiting for a relay holding it), then the session.
 * Returns false when the message went out meanwhile (the session stands).
 */
export async function withdrawSession(
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
 * rows, the message, and the chat when this message created it.
 */
export async function withdrawChatMessage(
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
