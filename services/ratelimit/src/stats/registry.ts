/**
 * The in-process statistics store of the rate limiter. Domain code and transports record into it by
 * name (names exactly as the reference implementation's, e.g.
 * `ratelimit.service.rate_limit.<statKey>.over_limit`); sinks (statsd, stdout, Prometheus pull,
 * the debug server's /stats) read it. Counters only ever grow: a push sink sends the difference
 * since its previous flush, a pull sink exposes the running total.
 */
export interface Counter {
  add(n: number): void;
  inc(): void;
  value(): number;
}

export interface Gauge {
  set(n: number): void;
  value(): number;
}

export interface Timer {
  /** Records one duration in milliseconds. */
  record(ms: number): void;
}

export interface TimerSnapshot {
  count: number;
  sumMs: number;
}

export interface StatsSnapshot {
  counters: ReadonlyMap<string, number>;
  gauges: ReadonlyMap<string, number>;
  timers: ReadonlyMap<string, TimerSnapshot>;
}

/** Samples a timer holds between two statsd flushes; the oldest are dropped first. */
export const RECENT_TIMER_SAMPLES = 10_000;

class CounterImpl implements Counter {
  private total = 0;
  add(n: number): void {
    if (n > 0) this.total += n;
  }
  inc(): void {
    this.total += 1;
  }
  value(): number {
    return this.total;
  }
}

class GaugeImpl implements Gauge {
  private current = 0;
  set(n: number): void {
    this.current = n;
  }
  value(): number {
    return this.current;
  }
}

/**
 * Count and sum since start, plus the samples since the last drain for the statsd sink: the newest
 * `RECENT_TIMER_SAMPLES` in a fixed ring, so recording allocates nothing (it runs once per call).
 */
class TimerImpl implements Timer {
  count = 0;
  sumMs = 0;
  private readonly ring = new Float64Array(RECENT_TIMER_SAMPLES);
  private oldest = 0;
  private held = 0;

  record(ms: number): void {
    this.count += 1;
    this.sumMs += ms;
    const size = this.ring.length;
    this.ring[(this.oldest + this.held) % size] = ms;
    if (this.held < size) this.held += 1;
    else this.oldest = (this.oldest + 1) % size;
  }

  /** The held samples, oldest first, and forgets them. */
  drain(): number[] {
    const out = new Array<number>(this.held);
    for (let i = 0; i < this.held; i++) out[i] = this.ring[(this.oldest + i) % this.ring.length]!;
    this.oldest = 0;
    this.held = 0;
    return out;
  }
}

export class StatsRegistry {
  private readonly counters = new Map<string, CounterImpl>();
  private readonly gauges = new Map<string, GaugeImpl>();
  private readonly timers = new Map<string, TimerImpl>();

  /**
   * When `disabled` (`DISABLE_STATS`), names are still accepted but nothing is kept.
   * `maxDynamicKeys` (`STATS_MAX_DYNAMIC_KEYS`): read by the caches of keys made from request
   * values (rules/rule-stats.ts), which stop making new ones past it.
   */
  constructor(
    private readonly disabled = false,
    readonly maxDynamicKeys = 10_000,
  ) {}

  counter(name: string): Counter {
    if (this.disabled) return NOOP_COUNTER;
    let c = this.counters.get(name);
    if (!c) {
      c = new CounterImpl();
      this.counters.set(name, c);
    }
    return c;
  }

  gauge(name: string): Gauge {
    if (this.disabled) return NOOP_GAUGE;
    let g = this.gauges.get(name);
    if (!g) {
      g = new GaugeImpl();
      this.gauges.set(name, g);
    }
    return g;
  }

  timer(name: string): Timer {
    if (this.disabled) return NOOP_TIMER;
    let t = this.timers.get(name);
    if (!t) {
      t = new TimerImpl();
      this.timers.set(name, t);
    }
    return t;
  }

  /** Current totals (a timer's held samples are left for `drainTimers`). */
  snapshot(): StatsSnapshot {
    return {
      counters: new Map([...this.counters].map(([k, c]) => [k, c.value()])),
      gauges: new Map([...this.gauges].map(([k, g]) => [k, g.value()])),
      timers: new Map([...this.timers].map(([k, t]) => [k, { count: t.count, sumMs: t.sumMs }])),
    };
  }

  /** Returns and clears the recent timer samples (what a push sink sends each flush). */
  drainTimers(): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const [k, t] of this.timers) {
      const samples = t.drain();
      if (samples.length > 0) out.set(k, samples);
    }
    return out;
  }
}

const NOOP_COUNTER: Counter = { add: () => {}, inc: () => {}, value: () => 0 };
const NOOP_GAUGE: Gauge = { set: () => {}, value: () => 0 };
const NOOP_TIMER: Timer = { record: () => {} };
