/** Clock in milliseconds; injectable for tests. */
export type Clock = () => number;

/**
 * A token bucket: holds at most `burst` tokens, refilled at `ratePerSec`. Each admitted message
 * takes one token; without a token the message is over the limit.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly ratePerSec: number,
    private readonly burst: number,
    private readonly now: Clock = () => performance.now(),
  ) {
    this.tokens = burst;
    this.updatedAt = now();
  }

  /** Takes a token if one is there. */
  take(): boolean {
    const now = this.now();
    const elapsedSec = Math.max(0, now - this.updatedAt) / 1000;
    this.updatedAt = now;
    this.tokens = Math.min(this.burst, this.tokens + elapsedSec * this.ratePerSec);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
