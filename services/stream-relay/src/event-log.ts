import type { PersistentEvent, StreamChunk } from "@tarsy/contracts";

/** One stored event of the events stream; `seq` is its stream sequence, the event id clients see. */
export interface StoredEvent {
  seq: number;
  /** Relative subject, e.g. `events.session.<id>`. */
  subject: string;
  payload: PersistentEvent;
}

export interface LiveFeed {
  /** The feed delivers every event with a sequence greater than this. */
  readonly startsAfter: number;
  stop(): Promise<void>;
}

export interface TransientSubscription {
  stop(): void;
}

/**
 * What the relay needs from the event log (the TARSY_EVENTS stream and the chunk subjects).
 * Implemented over the bus in production and in tests; kept as an interface so the WebSocket
 * protocol logic reads without NATS details.
 */
export interface EventLog {
  /** Stored events of one subject with sequence > afterSeq, oldest first, at most `limit`. */
  read(
    subject: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ events: StoredEvent[]; more: boolean }>;
  /** Sequence of the newest stored event of one subject (0 when there is none). */
  lastSequence(subject: string): Promise<number>;
  /** Follows one subject live from now on; `startsAfter` tells where the feed begins. */
  follow(subject: string, onEvent: (event: StoredEvent) => void): Promise<LiveFeed>;
  /** Transient stream chunks of one session (never stored). */
  subscribeChunks(sessionId: string, onChunk: (chunk: StreamChunk) => void): TransientSubscription;
}
