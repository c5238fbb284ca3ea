import { collectedValue } from '@platform/observability/collected-gauge';
import { HistogramCounts, registerHistogram } from '@platform/observability/plain-histogram';
import type { Registry } from 'prom-client';
import type { CacheCounters } from '../storage/cached-event-store.js';
import { mirroredCounter } from './mirrored-counter.js';

/**
 * The read cache's numbers, read from its counters at scrape time: hits and misses (the hit ratio
 * is `rate(hits) / (rate(hits) + rate(misses))`), invalidations, and whether the change feed is live
 * (0: the cache is bypassed, every read goes to the database). Reads and writes by route are in
 * `http_requests_total`.
 */
export function registerCacheMetrics(registry: Registry, counters: CacheCounters): void {
  const mirrored = (name: string, help: string, read: () => number) =>
    mirroredCounter(registry, name, help, read);
  mirrored('events_cache_hits_total', 'Reads answered from the read cache.', () => counters.hits);
  mirrored('events_cache_misses_total', 'Reads that went to the database.', () => counters.misses);
  mirrored(
    'events_cache_invalidations_total',
    'Times the read cache was cleared (a write, a change notification, the feed going down or up).',
    () => counters.invalidations,
  );
  collectedValue(registry, {
    name: 'events_cache_live',
    help: '1 while the read cache serves answers; 0 while the change feed is down (or the cache is off).',
    read: () => (counters.live ? 1 : 0),
  });
}

/** Seconds from a change's statement to its notification: milliseconds normally, seconds when stuck. */
const LAG_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * `events_change_feed_lag_seconds`: how late change notifications arrive (each instance hears its
 * own writes' too), a histogram read at scrape time. Returns what the change feed calls per
 * notification. Empty with PGlite or the read cache off (no change feed).
 */
export function registerChangeFeedLag(registry: Registry): (seconds: number) => void {
  const lag = new HistogramCounts(LAG_SECONDS);
  registerHistogram(registry, {
    name: 'events_change_feed_lag_seconds',
    help: "Seconds from a change's statement (the database's clock) to its notification received by this instance (PostgreSQL's LISTEN/NOTIFY).",
    read: () => [[{}, lag]],
  });
  return (seconds) => lag.observe(seconds);
}
