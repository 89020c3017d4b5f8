import { outboxPublisher } from "@tarsy/bus";
import {
  type OutboxEntry,
  type OutboxPublisher,
  publishOutboxEntry,
  publishOutboxNow,
  startOutboxRelay,
} from "@tarsy/db";
import type { IngestResources } from "./deps.ts";

/**
 * Delivery of what a request stored: the rows and their outbox messages commit together
 * (packages/db), then this publishes the outbox right away. If NATS is down the request
 * withdraws what it stored (only while its message is still unpublished, under the row
 * lock the relay also takes: `withdrawUnpublishedSession`, `withdrawUnpublishedChatMessage`),
 * so the client's 503 means "nothing happened". A process that dies between commit and
 * publish leaves a row the background relay delivers later.
 */

export function busPublisher(deps: Pick<IngestResources, "bus" | "settings">): OutboxPublisher {
  // A disconnected client would buffer the publish and send it after we gave up: fail now.
  return outboxPublisher(deps.bus, {
    failWhenDisconnected: true,
    timeoutMs: deps.settings.publishTimeoutMs,
  });
}

/** Publishes one committed outbox message now and marks it published. Throws on failure. */
export function deliverEntry(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma">,
  entry: OutboxEntry,
): Promise<void> {
  return publishOutboxEntry(deps.prisma, busPublisher(deps), entry);
}

/**
 * Publishes the given outbox messages (by msg id, in commit order) right now and marks them
 * published. Throws on the first failure; the rest stay for the background relay.
 */
export function deliverNow(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma">,
  msgIds: readonly string[],
): Promise<void> {
  return publishOutboxNow(deps.prisma, busPublisher(deps), msgIds);
}

/** Starts the relay that publishes what a crashed request left in the outbox. */
export function startBackgroundRelay(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma" | "logger">,
  intervalMs: number,
) {
  return startOutboxRelay(deps.prisma, busPublisher(deps), { intervalMs, logger: deps.logger });
}
