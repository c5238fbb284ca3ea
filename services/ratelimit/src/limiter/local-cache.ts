import type { OverLimitCache } from './rate-limiter.js';

/**
 * The local over-limit cache (`LOCAL_CACHE_SIZE_IN_BYTES` > 0): remembers keys found over their
 * limit until their window ends, so later hits in that window skip the backend. Bounded by an
 * estimate of its memory use; the least recently added keys are evicted first.
 */
const ENTRY_OVERHEAD_BYTES = 64;

export class LocalOverLimitCache implements OverLimitCache {
  private readonly entries = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  private static size(key: string): number {
    return key.length * 2 + ENTRY_OVERHEAD_BYTES;
  }

  has(key: string, nowSeconds: number): boolean {
    const expiresAt = this.entries.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > nowSeconds) return true;
    this.delete(key);
    return false;
  }

  add(key: string, expiresAtSeconds: number): void {
    this.delete(key);
    const size = LocalOverLimitCache.size(key);
    if (size > this.maxBytes) return;
    this.entries.set(key, expiresAtSeconds);
    this.bytes += size;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  /** Number of keys held (tests, debug). */
  size(): number {
    return this.entries.size;
  }

  private delete(key: string): void {
    if (this.entries.delete(key)) this.bytes -= LocalOverLimitCache.size(key);
  }
}
