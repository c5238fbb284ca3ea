import { Gauge, type Registry } from 'prom-client';

/** One sample of a gauge collected at scrape time: its label values (by name) and value. */
export interface GaugeSample<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  readonly value: number;
}

/**
 * A gauge whose samples are read at scrape time (from the database or the service's state) instead
 * of being kept up to date on the hot path. The series of the previous scrape are dropped first, so
 * a state that emptied disappears rather than keeping its last value. A failed read leaves the gauge
 * empty for that scrape (the `up` series and the failed-scrape counter say why) and is not thrown.
 */
export function collectedGauge<L extends string>(
  registry: Registry,
  spec: {
    name: string;
    help: string;
    labelNames?: readonly L[];
    read: () => Promise<ReadonlyArray<GaugeSample<L>>> | ReadonlyArray<GaugeSample<L>>;
    onError?: (error: unknown) => void;
  },
): Gauge<L> {
  return new Gauge<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const sample of await spec.read()) {
          this.set(sample.labels as Partial<Record<L, string>>, sample.value);
        }
      } catch (error) {
        spec.onError?.(error);
      }
    },
  });
}

/** A gauge without labels read at scrape time; a read of undefined (or a failed read) shows 0. */
export function collectedValue(
  registry: Registry,
  spec: {
    name: string;
    help: string;
    read: () => Promise<number | undefined> | number | undefined;
    onError?: (error: unknown) => void;
  },
): Gauge {
  return new Gauge({
    name: spec.name,
    help: spec.help,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const value = await spec.read();
        if (value !== undefined) this.set(value);
      } catch (error) {
        spec.onError?.(error);
      }
    },
  });
}
