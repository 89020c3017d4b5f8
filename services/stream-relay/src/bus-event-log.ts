import { type Bus, createBusAdmin } from "@tarsy/bus";
import { sessionChunksSubject } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { EventLog, LiveFeed } from "./event-log.ts";

/** The relay's event log over the bus: TARSY_EVENTS for stored events, core NATS for chunks. */
export function busEventLog(bus: Bus, logger: Logger): EventLog {
  const admin = createBusAdmin(bus);
  return {
    async read(subject, afterSeq, limit) {
      const { events, more } = await bus.replayEvents({ subject, afterSeq, limit });
      return { events, more };
    },
    lastSequence: (subject) => admin.lastSequence(subject),
    async follow(subject, onEvent): Promise<LiveFeed> {
      const startsAfter = await admin.lastSequence(subject);
      const feed = await bus.followEvents({ subject, afterSeq: startsAfter });
      const pump = (async () => {
        for await (const event of feed) onEvent(event);
      })().catch((err: unknown) => logger.error({ err, subject }, "event feed failed"));
      return {
        startsAfter,
        async stop() {
          await feed.close();
          await pump;
        },
      };
    },
    subscribeChunks(sessionId, onChunk) {
      const sub = bus.subscribeTransient("streamChunk", sessionChunksSubject(sessionId), onChunk);
      return { stop: () => sub.unsubscribe() };
    },
  };
}
