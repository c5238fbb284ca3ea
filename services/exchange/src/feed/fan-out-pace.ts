/**
 * How long the fan-out waits between two rounds of writes (outbox.ts), so that its writes take at
 * most `share` of the process's CPU while order entry keeps the process busy: after a round that
 * cost c of CPU, the next starts once the process has spent c x (1 / share - 1) on anything else,
 * or after `maxDelayMs` at most (an idle process spends nothing else; the wait is then shorter for
 * a cheap round: ten times its share's worth). The frames of the batches committed meanwhile go out
 * together in the next round, still one frame per batch.
 *
 * A budget of the process's CPU rather than of its wall time: on a machine whose cores are shared,
 * the process gets a slice of them, and a wall-time budget let the fan-out take as much of that
 * slice as order entry (measured: 20 % of the wall time was 45 % of the process's CPU at a load
 * average of 30). Pure: the clock and the CPU reading are passed in.
 */
export class FanOutPace {
  /** CPU (µs) the process must spend on other work before the next round. */
  private need = 0;
  private cpuAt = 0;
  private endedAt = 0;
  private ceiling = 0;

  constructor(
    private readonly share: number,
    private readonly maxDelayMs: number,
    /** The process's CPU time so far, µs (user + system). */
    private readonly cpu: () => number,
    /** A clock in ms. */
    private readonly now: () => number,
  ) {}

  /** A round ended that cost `cost` µs of CPU. */
  ended(cost: number): void {
    this.need = this.share >= 1 ? 0 : cost * (1 / this.share - 1);
    this.cpuAt = this.cpu();
    this.endedAt = this.now();
    this.ceiling = Math.min(this.maxDelayMs, (this.need / 1000) * 10);
  }

  /** Ms to wait before the next round may start (0: now); ask again after that. */
  wait(): number {
    if (this.need === 0) return 0;
    if (this.cpu() - this.cpuAt >= this.need) return 0;
    const elapsed = this.now() - this.endedAt;
    if (elapsed >= this.ceiling) return 0;
    return Math.min(5, this.ceiling - elapsed);
  }
}

/** The process's CPU time so far in µs. */
export function processCpu(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}
