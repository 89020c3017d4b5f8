import { TokenBucket } from "./token-bucket.ts";

export interface ControlLimits {
  /** Control messages (subscribe, unsubscribe, catchup, ping, anything sent) per second. */
  controlRatePerSec: number;
  /** Messages a client may send at once before the rate applies; also the most actions queued. */
  controlBurst: number;
  /** Messages over the limit tolerated (each dropped) before the connection is closed with 1008. */
  controlViolationsBeforeClose: number;
  /** Catch-ups of distinct channels waiting or running for one client. */
  maxPendingCatchups: number;
}

export const DEFAULT_CONTROL_LIMITS: ControlLimits = {
  controlRatePerSec: 20,
  controlBurst: 60,
  controlViolationsBeforeClose: 20,
  maxPendingCatchups: 8,
};

/**
 * What happens to one incoming message: `admit` it; `warn` (drop it and send the client one
 * error frame); `drop` it silently (the client was already warned); `close` the connection
 * (sustained abuse).
 */
export type Admission = "admit" | "warn" | "drop" | "close";

/**
 * Per-client admission of control messages: a token bucket, a bound on queued actions, and a
 * count of messages over the limit. The first message over the limit is answered with an error
 * frame; after `controlViolationsBeforeClose` more in a row the client is closed. A message
 * admitted again ends the episode.
 */
export class ControlAdmission {
  private readonly bucket: TokenBucket;
  private violations = 0;

  constructor(
    private readonly limits: ControlLimits,
    now?: () => number,
  ) {
    this.bucket = new TokenBucket(limits.controlRatePerSec, limits.controlBurst, now);
  }

  /** Decides for one message; `queued` is the number of actions waiting or running. */
  admit(queued: number): Admission {
    if (queued < this.limits.controlBurst && this.bucket.take()) {
      this.violations = 0;
      return "admit";
    }
    this.violations++;
    if (this.violations === 1) return "warn";
    if (this.violations > this.limits.controlViolationsBeforeClose) return "close";
    return "drop";
  }
}
