import type { Registry } from 'prom-client';

/**
 * The counts of one histogram series as plain numbers: the hot path pays a bucket search and three
 * additions, no label validation or hashing (prom-client's labelled children do both on every call:
 * about 8 us an observation measured on the request path). The registry turns them into samples at
 * scrape time (`registerHistogram`).
 */
export class HistogramCounts {
  /** Observations per bucket (not cumulative; the exposition adds them up). */
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.buckets = new Float64Array(bounds.length);
  }

  /** Records `times` observations of `value` (a batch's mean per item, observed for each item). */
  observe(value: number, times = 1): void {
    this.sum += value * times;
    this.count += times;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i += 1) {
      if (value <= (bounds[i] as number)) {
        this.buckets[i] = (this.buckets[i] as number) + times;
        return;
      }
    }
  }
}

/** One sample as prom-client's registry formats it. */
export interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * Registers a metric object as the registry reads it (`name`, `help`, `type`, `get()`): prom-client
 * formats its samples like its own.
 */
export function registerCollected(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  samples: () => Sample[],
): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset: () => {},
  };
  // biome-ignore lint/suspicious/noExplicitAny: prom-client types registerMetric as its Metric class; the registry reads only these fields
  registry.registerMetric(metric as any);
}

/** The `_bucket`, `_sum` and `_count` samples of one series. */
export function histogramSamples(
  name: string,
  labels: Record<string, string>,
  counts: HistogramCounts,
  into: Sample[] = [],
): Sample[] {
  let cumulative = 0;
  counts.bounds.forEach((bound, i) => {
    cumulative += counts.buckets[i] as number;
    into.push({ metricName: `${name}_bucket`, labels: { le: String(bound), ...labels }, value: cumulative });
  });
  into.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: counts.count });
  into.push({ metricName: `${name}_sum`, labels, value: counts.sum });
  into.push({ metricName: `${name}_count`, labels, value: counts.count });
  return into;
}

/**
 * A histogram whose series are `HistogramCounts` kept by their owner (an order writer, a change
 * feed) and read at scrape time: `read` yields each series' labels and counts.
 */
export function registerHistogram(
  registry: Registry,
  spec: {
    name: string;
    help: string;
    read: () => Iterable<readonly [labels: Record<string, string>, counts: HistogramCounts]>;
  },
): void {
  registerCollected(registry, spec.name, spec.help, 'histogram', () => {
    const samples: Sample[] = [];
    for (const [labels, counts] of spec.read()) histogramSamples(spec.name, labels, counts, samples);
    return samples;
  });
}
