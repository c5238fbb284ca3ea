/**
 * The proxy's Prometheus metrics, kept as plain numbers so the hot path only increments a field, and
 * rendered in the text exposition format on GET /metrics.
 */

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ProxyMetrics {
  hits = 0;
  misses = 0;
  staleServed = 0;
  notModified = 0;
  private readonly buckets = new Array<number>(BUCKETS.length).fill(0);
  private upstreamCount = 0;
  private upstreamSum = 0;
  private upstreamFailures = 0;

  observeUpstream(seconds: number, failed: boolean): void {
    this.upstreamCount += 1;
    this.upstreamSum += seconds;
    if (failed) this.upstreamFailures += 1;
    for (let i = 0; i < BUCKETS.length; i += 1) {
      if (seconds <= (BUCKETS[i] as number)) this.buckets[i] = (this.buckets[i] as number) + 1;
    }
  }

  render(gauges: {
    breakerOpen: boolean;
    queueDepth: number;
    cacheEntries: number;
    cacheBytes: number;
  }): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, value: number) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
    };
    metric(
      'graphql_proxy_cache_hits_total',
      'counter',
      'Queries answered from the cache (fresh).',
      this.hits,
    );
    metric(
      'graphql_proxy_cache_misses_total',
      'counter',
      'Queries the cache could not answer fresh.',
      this.misses,
    );
    metric(
      'graphql_proxy_cache_stale_served_total',
      'counter',
      'Stale answers served (stale-while-revalidate or stale-if-error).',
      this.staleServed,
    );
    metric('graphql_proxy_not_modified_total', 'counter', '304 answers to If-None-Match.', this.notModified);
    metric(
      'graphql_proxy_upstream_failures_total',
      'counter',
      'Upstream calls without a usable answer.',
      this.upstreamFailures,
    );
    const name = 'graphql_proxy_upstream_duration_seconds';
    lines.push(`# HELP ${name} Duration of upstream calls.`, `# TYPE ${name} histogram`);
    BUCKETS.forEach((bound, i) => {
      lines.push(`${name}_bucket{le="${bound}"} ${this.buckets[i]}`);
    });
    lines.push(`${name}_bucket{le="+Inf"} ${this.upstreamCount}`);
    lines.push(`${name}_sum ${this.upstreamSum}`, `${name}_count ${this.upstreamCount}`);
    metric(
      'graphql_proxy_breaker_open',
      'gauge',
      '1 while the circuit breaker is open.',
      gauges.breakerOpen ? 1 : 0,
    );
    metric('graphql_proxy_queue_depth', 'gauge', 'Mutations waiting in the queue.', gauges.queueDepth);
    metric('graphql_proxy_cache_entries', 'gauge', 'Entries in the cache.', gauges.cacheEntries);
    metric('graphql_proxy_cache_bytes', 'gauge', 'Bytes of cached bodies.', gauges.cacheBytes);
    return `${lines.join('\n')}\n`;
  }
}
