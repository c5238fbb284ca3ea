import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The proxy's Prometheus metrics (prom-client; the names are those of the hand-written exposition
 * they replace). The hot path only increments a plain field (`hits += 1`); the counters read the
 * fields at scrape time. Served by the metrics listener (`METRICS_PORT`), never the public port.
 */

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the gauges read at scrape time. */
/**
 * The proxy's state read at scrape time. Asynchronous, since in a fleet the queue and the cache are in
 * Redis (QUEUE_STORE/CACHE_STORE=redis) and the figures are the fleet's.
 */
export interface ProxyGauges {
  breakerOpen(): boolean;
  queueDepth(): Promise<number>;
  /** Milliseconds since the oldest queued mutation was queued; undefined when the queue is empty. */
  oldestQueuedAgeMs(): Promise<number | undefined>;
  /** True while the upstream rejected the queue's head: nothing behind it is sent. */
  queueBlocked(): Promise<boolean>;
  cacheSizes(): Promise<{ entries: number; bytes: number }>;
}

export class ProxyMetrics {
  hits = 0;
  misses = 0;
  staleServed = 0;
  notModified = 0;
  private readonly upstream: Histogram;
  private readonly upstreamFailures: Counter;

  constructor(readonly registry: Registry = new Registry()) {
    const mirrored = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    mirrored('graphql_proxy_cache_hits_total', 'Queries answered from the cache (fresh).', () => this.hits);
    mirrored(
      'graphql_proxy_cache_misses_total',
      'Queries the cache could not answer fresh.',
      () => this.misses,
    );
    mirrored(
      'graphql_proxy_cache_stale_served_total',
      'Stale answers served (stale-while-revalidate or stale-if-error).',
      () => this.staleServed,
    );
    mirrored('graphql_proxy_not_modified_total', '304 answers to If-None-Match.', () => this.notModified);
    this.upstreamFailures = new Counter({
      name: 'graphql_proxy_upstream_failures_total',
      help: 'Upstream calls without a usable answer.',
      registers: [registry],
    });
    this.upstream = new Histogram({
      name: 'graphql_proxy_upstream_duration_seconds',
      help: 'Duration of upstream calls.',
      buckets: BUCKETS,
      registers: [registry],
    });
  }

  observeUpstream(seconds: number, failed: boolean): void {
    this.upstream.observe(seconds);
    if (failed) this.upstreamFailures.inc();
  }

  /** The gauges of the proxy's state, read at scrape time. Call once. */
  watch(gauges: ProxyGauges): void {
    const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          // A store out of reach (Redis down) leaves the gauge at its last value rather than failing the scrape.
          this.set(await Promise.resolve(read()).catch(() => Number.NaN));
        },
      });
    gauge('graphql_proxy_breaker_open', '1 while the circuit breaker is open.', () =>
      gauges.breakerOpen() ? 1 : 0,
    );
    gauge('graphql_proxy_queue_depth', 'Mutations waiting in the queue.', gauges.queueDepth);
    gauge(
      'graphql_proxy_queue_oldest_age_seconds',
      'Age of the oldest queued mutation; 0 when the queue is empty.',
      async () => ((await gauges.oldestQueuedAgeMs()) ?? 0) / 1000,
    );
    gauge(
      'graphql_proxy_queue_blocked',
      '1 while the upstream rejected the head of the queue (nothing behind it is sent).',
      async () => ((await gauges.queueBlocked()) ? 1 : 0),
    );
    gauge(
      'graphql_proxy_cache_entries',
      'Entries in the cache.',
      async () => (await gauges.cacheSizes()).entries,
    );
    gauge(
      'graphql_proxy_cache_bytes',
      'Bytes of cached bodies.',
      async () => (await gauges.cacheSizes()).bytes,
    );
  }
}
