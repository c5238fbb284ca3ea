import type { Gauge, StatsRegistry } from '../stats/registry.js';
import type { OverLimitCache } from './rate-limiter.js';

/**
 * The local over-limit cache (`LOCAL_CACHE_SIZE_IN_BYTES` > 0): remembers keys found over their
 * limit until their window ends, so later hits in that window skip the backend. Bounded by an
 * estimate of its memory use; the least recently added keys are evicted first.
 *
 * With a registry it keeps the reference's `ratelimit.localcache.*` gauges (the figures of its
 * freecache: entryCount, hitCount, missCount, lookupCount, expiredCount, evacuateCount,
 * overwriteCount, averageAccessTime in unix seconds).
 */
const ENTRY_OVERHEAD_BYTES = 64;

const GAUGES = [
  'evacuateCount',
  'expiredCount',
  'entryCount',
  'averageAccessTime',
  'hitCount',
  'missCount',
  'lookupCount',
  'overwriteCount',
] as const;
type GaugeName = (typeof GAUGES)[number];

interface Entry {
  expiresAt: number;
  accessedAt: number;
}

export class LocalOverLimitCache implements OverLimitCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private accessSum = 0;
  private readonly counts: Record<GaugeName, number> = {
    evacuateCount: 0,
    expiredCount: 0,
    entryCount: 0,
    averageAccessTime: 0,
    hitCount: 0,
    missCount: 0,
    lookupCount: 0,
    overwriteCount: 0,
  };
  private readonly gauges: Record<GaugeName, Gauge> | undefined;

  constructor(
    private readonly maxBytes: number,
    registry?: StatsRegistry,
  ) {
    if (registry) {
      const g = {} as Record<GaugeName, Gauge>;
      for (const name of GAUGES) g[name] = registry.gauge(`ratelimit.localcache.${name}`);
      this.gauges = g;
    }
  }

  private static size(key: string): number {
    return key.length * 2 + ENTRY_OVERHEAD_BYTES;
  }

  has(key: string, nowSeconds: number): boolean {
    this.counts.lookupCount++;
    const entry = this.entries.get(key);
    let hit = false;
    if (entry === undefined) {
      this.counts.missCount++;
    } else if (entry.expiresAt > nowSeconds) {
      this.counts.hitCount++;
      this.accessSum += nowSeconds - entry.accessedAt;
      entry.accessedAt = nowSeconds;
      hit = true;
    } else {
      this.counts.missCount++;
      this.counts.expiredCount++;
      this.delete(key);
    }
    this.publish();
    return hit;
  }

  add(key: string, expiresAtSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): void {
    if (this.delete(key)) this.counts.overwriteCount++;
    const size = LocalOverLimitCache.size(key);
    if (size <= this.maxBytes) {
      this.entries.set(key, { expiresAt: expiresAtSeconds, accessedAt: nowSeconds });
      this.accessSum += nowSeconds;
      this.bytes += size;
      for (const oldest of this.entries.keys()) {
        if (this.bytes <= this.maxBytes) break;
        this.delete(oldest);
        this.counts.evacuateCount++;
      }
    }
    this.publish();
  }

  /** Number of keys held (tests, debug). */
  size(): number {
    return this.entries.size;
  }

  private delete(key: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.bytes -= LocalOverLimitCache.size(key);
    this.accessSum -= entry.accessedAt;
    return true;
  }

  private publish(): void {
    if (!this.gauges) return;
    this.counts.entryCount = this.entries.size;
    this.counts.averageAccessTime =
      this.entries.size === 0 ? 0 : Math.floor(this.accessSum / this.entries.size);
    for (const name of GAUGES) this.gauges[name].set(this.counts[name]);
  }
}
