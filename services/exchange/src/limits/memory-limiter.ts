import { hit, type RuleVerdict, type WindowCounter, windowEnded } from './fixed-window.js';
import type { LimitCheck, LimitOutcome, RequestLimiter } from './limiter.js';
import type { LimitRule } from './rules.js';

export interface MemoryLimiterOptions {
  /** Clock in ms. @default Date.now */
  readonly now?: () => number;
  /**
   * Most counters kept at once. Counters of ended windows are swept when the map grows; past this
   * many live ones a check fails (and the failure mode applies) instead of memory growing without
   * bound. @default 1000000
   */
  readonly maxCounters?: number;
}

interface Entry {
  readonly rule: LimitRule;
  counter: WindowCounter;
}

const FIRST_SWEEP_AT = 10_000;

/**
 * The in-process limiter (no `RATELIMIT_GRPC_URL`): one process's counters, lost on restart and not
 * shared between instances. The counting itself is fixed-window.ts.
 */
export class MemoryLimiter implements RequestLimiter {
  readonly description = 'the in-process limiter';
  private readonly counters = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly maxCounters: number;
  private sweepAt = FIRST_SWEEP_AT;

  constructor(options: MemoryLimiterOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxCounters = options.maxCounters ?? 1_000_000;
  }

  /** Counters held now (tests: memory stays bounded). */
  get size(): number {
    return this.counters.size;
  }

  async check(checks: readonly LimitCheck[]): Promise<LimitOutcome> {
    const nowMs = this.now();
    const verdicts: RuleVerdict[] = [];
    for (const { rule, subject } of checks) {
      const key = `${rule.name}\u0000${subject}`;
      const entry = this.counters.get(key);
      if (!entry && !this.roomForOneMore(nowMs)) {
        return { kind: 'failed', reason: 'error', message: `more than ${this.maxCounters} live counters` };
      }
      const counted = hit(rule, entry?.counter, nowMs);
      if (entry) entry.counter = counted.counter;
      else this.counters.set(key, { rule, counter: counted.counter });
      verdicts.push(counted.verdict);
    }
    return { kind: 'decided', verdicts };
  }

  private roomForOneMore(nowMs: number): boolean {
    if (this.counters.size < this.sweepAt && this.counters.size < this.maxCounters) return true;
    for (const [key, entry] of this.counters) {
      if (windowEnded(entry.rule, entry.counter, nowMs)) this.counters.delete(key);
    }
    // Sweep again only after the map doubled, so a sweep costs O(1) per insert amortised.
    this.sweepAt = Math.max(FIRST_SWEEP_AT, this.counters.size * 2);
    return this.counters.size < this.maxCounters;
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}
