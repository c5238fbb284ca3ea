import { StoreFullError } from '../backends/memory.js';
import type { QuotaState } from './assignment.js';
import { windowStartMs } from './assignment.js';

/**
 * The shared state of RLQS: per rule counter (`key`), who takes part (stream x bucket pairs with
 * the time of their last report) and how many requests were reported allowed in the current
 * window. It lives in the configured backend, so every RLQS server on one Redis sees the same
 * participants and usage and computes the same shares. One `report` call per usage report (one
 * round trip: one script call, or one per key on a cluster).
 */
export interface QuotaReport {
  /** The rule counter, hash-tagged: `CACHE_KEY_PREFIX{rlqs_<domain>_<key>_<value>_...}`. */
  readonly key: string;
  /** The participant: `<stream id>|<bucket id>`. */
  readonly member: string;
  /** Requests Envoy allowed since its last report (added to the window's usage). */
  readonly allowed: number;
  /** `unit` x `unit_multiplier` of the rule. */
  readonly windowSeconds: number;
  /** The participant leaves (stream closed, bucket abandoned): removed, nothing counted. */
  readonly leave: boolean;
}

export interface QuotaStore {
  readonly description: string;
  /** Applies every report and answers each counter's state after it, in order. */
  report(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]>;
  close(): Promise<void>;
}

interface Counter {
  /** member -> last report (ms) */
  readonly members: Map<string, number>;
  windowStart: number;
  windowMs: number;
  usage: number;
}

/**
 * The in-process quota state (BACKEND_TYPE=memory): one server's streams only. A counter is kept
 * while it has participants or usage in its window; at most `maxCounters` (MEMORY_MAX_KEYS) of
 * them, beyond which a report that needs a new one fails whole (StoreFullError: the quota service
 * answers it as a failed backend call) rather than the heap growing with every bucket id Envoy
 * was made to report.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly description = 'in-process quota state (this server only)';
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper: NodeJS.Timeout;
  /** When the store was last swept because it was full (at most once a second). */
  private fullSweepAtMs = Number.NEGATIVE_INFINITY;

  /** `ttlMs`: a participant that has not reported for this long no longer takes part. */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxCounters = 2_000_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, ttlMs));
    this.sweeper.unref();
  }

  reportSync(reports: readonly QuotaReport[], nowMs: number): QuotaState[] {
    if (this.counters.size + reports.length > this.maxCounters) this.makeRoom(reports, nowMs);
    return reports.map((r) => {
      let c = this.counters.get(r.key);
      if (!c) {
        c = { members: new Map(), windowStart: 0, windowMs: 0, usage: 0 };
        this.counters.set(r.key, c);
      }
      if (r.leave) c.members.delete(r.member);
      else c.members.set(r.member, nowMs);
      for (const [member, at] of c.members) if (at < nowMs - this.ttlMs) c.members.delete(member);
      const start = windowStartMs(nowMs, r.windowSeconds);
      if (c.windowStart !== start || c.windowMs !== r.windowSeconds * 1000) {
        c.windowStart = start;
        c.windowMs = r.windowSeconds * 1000;
        c.usage = 0;
      }
      if (!r.leave) c.usage += r.allowed;
      // Nothing left to remember: no participant, nothing counted in the window.
      if (c.members.size === 0 && c.usage === 0) this.counters.delete(r.key);
      return { participants: c.members.size, usage: c.usage };
    });
  }

  /** Throws StoreFullError before anything changes when the reports' new counters would pass the bound. */
  private makeRoom(reports: readonly QuotaReport[], nowMs: number): void {
    let fresh = 0;
    for (const r of reports) if (!r.leave && !this.counters.has(r.key)) fresh++;
    if (this.counters.size + fresh <= this.maxCounters) return;
    if (nowMs - this.fullSweepAtMs >= 1000) {
      this.fullSweepAtMs = nowMs;
      this.sweepAt(nowMs);
    }
    if (this.counters.size + fresh > this.maxCounters) throw new StoreFullError(this.maxCounters);
  }

  report(reports: readonly QuotaReport[], nowMs: number): Promise<QuotaState[]> {
    return Promise.resolve(this.reportSync(reports, nowMs));
  }

  private sweep(): void {
    this.sweepAt(this.now());
  }

  private sweepAt(nowMs: number): void {
    for (const [key, c] of this.counters) {
      for (const [member, at] of c.members) if (at < nowMs - this.ttlMs) c.members.delete(member);
      // The usage matters until its window ends, even with nobody taking part.
      if (c.members.size === 0 && nowMs >= c.windowStart + c.windowMs) this.counters.delete(key);
    }
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.counters.clear();
    return Promise.resolve();
  }
}
