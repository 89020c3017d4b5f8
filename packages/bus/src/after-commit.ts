/**
 * Publishing what a committed transaction wrote, so that every persistent message reaches
 * its stream at least once (ARCHITECTURE.md: "through the outbox or a retried publish").
 * The catalog's Nats-Msg-Id makes a repeat within the stream's duplicate window a no-op, so
 * retrying is always safe.
 *
 * - `outboxPublisher`: the `publish` of an outbox relay and of the publish-right-after-commit
 *   fast path (`@tarsy/db`'s `relayOutbox`, `publishOutboxEntry`); one failed attempt throws
 *   and the row waits for the next relay pass.
 * - `publishWithRetry`: for a row written without an outbox row; retries a failed attempt
 *   for a bounded time, so a NATS blip costs a delay, not the message.
 */
import { withTimeout } from "@tarsy/runtime";
import type { Bus } from "./bus.ts";
import { BusNotConnectedError, BusPublishError } from "./errors.ts";
import type { PersistentMessage, PublishResult } from "./publish.ts";

export interface OutboxPublisherOptions {
  /**
   * Fail at once while the connection is down, instead of letting the client buffer the
   * publish and send it after reconnecting: for a caller that reports the failure (a 503)
   * and withdraws what it stored.
   */
  failWhenDisconnected?: boolean;
  /** Give up on one message after this long (BusPublishError). Default: the client's own. */
  timeoutMs?: number;
}

/** Publishes one committed message; resolves once the stream stored it, else throws. */
export type CommittedPublisher = (message: PersistentMessage) => Promise<void>;

export function outboxPublisher(
  bus: Pick<Bus, "isConnected" | "publishMessage">,
  options: OutboxPublisherOptions = {},
): CommittedPublisher {
  const { failWhenDisconnected = false, timeoutMs } = options;
  return async (message) => {
    if (failWhenDisconnected && !bus.isConnected()) {
      throw new BusNotConnectedError("NATS is not connected");
    }
    const publishing = bus.publishMessage(message);
    if (timeoutMs === undefined) {
      await publishing;
      return;
    }
    await withTimeout(
      publishing,
      timeoutMs,
      () => new BusPublishError(message.key, { cause: new Error(`no ack in ${timeoutMs} ms`) }),
    );
  };
}

export interface RetryPublishOptions {
  /** Keep retrying for this long after the first attempt (keep it below the duplicate window). */
  retryForMs: number;
  /** Wait before the second attempt, doubling up to `maxDelayMs`; default 250 ms. */
  initialDelayMs?: number;
  /** Default 5 s. */
  maxDelayMs?: number;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Publishes `message`, retrying a failed attempt (no connection, no ack, JetStream not ready
 * after a restart) until it is stored or `retryForMs` has passed; then throws the last
 * error. Errors no retry can fix (an invalid payload, a closed bus) throw at once.
 */
export async function publishWithRetry(
  bus: Pick<Bus, "publishMessage">,
  message: PersistentMessage,
  options: RetryPublishOptions,
): Promise<PublishResult[]> {
  const deadline = Date.now() + options.retryForMs;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  let delayMs = options.initialDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await bus.publishMessage(message);
    } catch (err) {
      const left = deadline - Date.now();
      if (!(err instanceof BusPublishError) || left <= 0) throw err;
      const wait = Math.min(delayMs, left);
      options.onRetry?.(err, attempt, wait);
      await sleep(wait);
      delayMs = Math.min(maxDelayMs, delayMs * 2);
    }
  }
}
