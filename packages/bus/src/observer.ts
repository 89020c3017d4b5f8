import type { ConsumerKey, MessageKey, PayloadOf } from "@tarsy/contracts";

/** One published message with its catalog key, so a switch over `key` narrows the payload. */
export type PublishedMessage = { [K in MessageKey]: { key: K; payload: PayloadOf<K> } }[MessageKey];

/**
 * Hooks for what a service counts (its metrics) without the bus knowing about metrics. Every
 * hook is optional and called synchronously; an exception in one is swallowed, so an observer
 * can never make a publish or a delivery fail.
 */
export interface BusObserver {
  /** `publish` stored the message (not dropped as a duplicate), or `publishTransient` sent it. */
  published?(message: PublishedMessage): void;
  /**
   * A work message arrived again (delivery count > 1) after a failure, a hand-back or a lost
   * ack; not when this process asked for it with `retryLater`.
   */
  redelivered?(consumer: ConsumerKey, deliveryCount: number): void;
  /** A work message was written to the dead letters. */
  deadLettered?(consumer: ConsumerKey): void;
}

/** Calls one hook, ignoring what it throws. */
export function notify(call: () => void): void {
  try {
    call();
  } catch {
    // An observer must not break messaging.
  }
}
