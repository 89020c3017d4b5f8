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

/** Time without a message over the limit after which a client is in good standing again. */
const QUIET_MS = 1_000;

/**
 * What happens to one incoming message: `admit` it; `warn` (drop it and send the client one
 * error frame); `drop` it silently (the client was already warned); `close` the connection
 * (sustained abuse).
 */
export type Admission = "admit" | "warn" | "drop" | "close";

/**
 * Per-client admission of control messages: a token bucket, a bound on queued actions, and a
 * count of messages over the limit. The first message over the limit is answered with an error
 * frame; after `controlViolationsBeforeClose` more the client is closed. The episode ends when
 * a message is admitted a quiet second after the last one over the limit.
 */
export class ControlAdmission {
  private readonly bucket: TokenBucket;
  private violations = 0;
  private lastViolationAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limits: ControlLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.bucket = new TokenBucket(limits.controlRatePerSec, limits.controlBurst, now);
  }

  /** Decides for one message; `queued` is the number of actions waiting or running. */
  admit(queued: number): Admission {
    const now = this.now();
    if (queued < this.limits.controlBurst && this.bucket.take()) {
      if (now - this.lastViolationAt >= QUIET_MS) this.violations = 0;
      return "admit";
    }
    this.violations++;
    this.lastViolationAt = now;
    if (this.violations === 1) return "warn";
    if (this.violations > this.limits.controlViolationsBeforeClose) return "close";
    return "drop";
  }
}
