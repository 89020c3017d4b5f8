import type { BusObserver, PublishedMessage } from "@tarsy/bus";
import { CONSUMERS, MESSAGES } from "@tarsy/contracts";
import type { MetricOf } from "../registry.ts";

/** The kind label of a published message: its event type, or null when it is no event. */
export function eventKind(message: PublishedMessage): string | null {
  if (message.key === "streamChunk") return message.payload.type;
  const def = MESSAGES[message.key];
  if (!("stream" in def) || def.stream !== "events") return null;
  return (message.payload as { type: string }).type;
}

export interface BusMetrics {
  eventsPublished?: MetricOf<"eventsPublished">;
  workRedeliveries?: MetricOf<"workRedeliveries">;
  deadLetters?: MetricOf<"deadLetters">;
}

/**
 * A bus observer that counts dashboard events by type and, for a work consumer's process,
 * redeliveries and dead letters by consumer (its durable name, as `nats consumer info` shows).
 */
export function busMetricsObserver(metrics: BusMetrics): BusObserver {
  const { eventsPublished, workRedeliveries, deadLetters } = metrics;
  return {
    published(message) {
      const kind = eventKind(message);
      if (kind) eventsPublished?.inc({ kind });
    },
    ...(workRedeliveries && {
      redelivered: (consumer) => workRedeliveries.inc({ consumer: CONSUMERS[consumer].durable }),
    }),
    ...(deadLetters && {
      deadLettered: (consumer) => deadLetters.inc({ consumer: CONSUMERS[consumer].durable }),
    }),
  };
}
