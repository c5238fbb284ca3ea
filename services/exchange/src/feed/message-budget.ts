/**
 * A token bucket over the frames a client sends (pure: the clock is an argument): `burst` frames at
 * once, refilled at `perSecond`. Bounds what a flood of subscribe messages can make the server do.
 */
export class MessageBudget {
  private tokens: number;
  private at: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  /** Takes one token; false when the client is over its rate. */
  take(now: number): boolean {
    const elapsed = Math.max(0, now - this.at);
    this.at = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.perSecond) / 1000);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
