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
  /** Durations recorded since the previous `drainTimers()`; bounded, oldest dropped first. */
  recent: readonly number[];
}

export interface StatsSnapshot {
  counters: ReadonlyMap<string, number>;
  gauges: ReadonlyMap<string, number>;
  timers: ReadonlyMap<string, TimerSnapshot>;
}

const RECENT_TIMER_SAMPLES = 10_000;

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

class TimerImpl implements Timer {
  count = 0;
  sumMs = 0;
  recent: number[] = [];
  record(ms: number): void {
    this.count += 1;
    this.sumMs += ms;
    if (this.recent.length >= RECENT_TIMER_SAMPLES) this.recent.shift();
    this.recent.push(ms);
  }
}

export class StatsRegistry {
  private readonly counters = new Map<string, CounterImpl>();
  private readonly gauges = new Map<string, GaugeImpl>();
  private readonly timers = new Map<string, TimerImpl>();

  /** When true (`DISABLE_STATS`), names are still accepted but nothing is kept. */
  constructor(private readonly disabled = false) {}

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

  /** Current totals; timers' `recent` samples are left in place. */
  snapshot(): StatsSnapshot {
    return {
      counters: new Map([...this.counters].map(([k, c]) => [k, c.value()])),
      gauges: new Map([...this.gauges].map(([k, g]) => [k, g.value()])),
      timers: new Map(
        [...this.timers].map(([k, t]) => [k, { count: t.count, sumMs: t.sumMs, recent: [...t.recent] }]),
      ),
    };
  }

  /** Returns and clears the recent timer samples (what a push sink sends each flush). */
  drainTimers(): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const [k, t] of this.timers) {
      if (t.recent.length > 0) out.set(k, t.recent);
      t.recent = [];
    }
    return out;
  }
}

const NOOP_COUNTER: Counter = { add: () => {}, inc: () => {}, value: () => 0 };
const NOOP_GAUGE: Gauge = { set: () => {}, value: () => 0 };
const NOOP_TIMER: Timer = { record: () => {} };
