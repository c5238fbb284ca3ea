import type { Logger } from 'pino';

/**
 * One error line per interval for a failure that repeats on every call (a backend down, the
 * in-process store full under a flood of new keys): the first is logged at once, those within the
 * next `intervalMs` are counted, and the first after it is logged with `suppressed`, the number
 * left out since the previous line. Without it a caller sending a request per millisecond to a
 * failed backend wrote a log line per request, the disk filling as fast as the caller could send.
 */
export class RepeatedErrorLog {
  private lastAtMs = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    private readonly intervalMs = 1000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  report(error: unknown): void {
    const now = this.nowMs();
    if (now - this.lastAtMs < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.lastAtMs = now;
    if (this.suppressed > 0) this.logger.error({ err: error, suppressed: this.suppressed }, this.message);
    else this.logger.error({ err: error }, this.message);
    this.suppressed = 0;
  }
}
