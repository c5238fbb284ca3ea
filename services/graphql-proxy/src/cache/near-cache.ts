import type { CachedAnswer } from './response-cache.js';

/**
 * The in-process copy of recently read entries of the fleet's Redis cache (issue 46): a hit on an
 * entry read moments ago needs no round trip to Redis. Kept coherent with the fleet by the fleet's
 * invalidation epoch (the `{prefix}:epoch` counter every invalidation and purge increments and
 * announces on the fleet channel):
 *
 * - every announcement (another instance's or this one's) empties it;
 * - an entry is taken in only with the epoch Redis returned with it, atomically, and only when that
 *   epoch is not older than the newest one announced: an entry read before an invalidation whose
 *   announcement overtook the reply is not kept;
 * - it is used only while the fleet channel is subscribed (`resume` after every (re)subscription,
 *   with the epoch read then, `suspend` as soon as the subscription's connection drops: announcements
 *   sent meanwhile are lost), so a missed announcement can never leave an entry behind;
 * - an entry is used for at most `maxAgeMs` after it was read, a bound on anything else;
 * - bounded in entries and bytes, least recently used dropped first.
 *
 * What remains is the channel's delivery time: an instance may answer from its copy for the
 * fraction of a millisecond between another instance's invalidation in Redis and the announcement
 * reaching it (CACHE_NEAR_MAX_BYTES=0 turns the copy off).
 */

export interface NearCacheLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
  readonly maxAgeMs: number;
}

interface NearEntry {
  readonly answer: CachedAnswer;
  readonly readAt: number;
}

export class NearCache {
  private readonly entries = new Map<string, NearEntry>();
  /** The most recently used entry (the last in `entries`): reading it again leaves the order as it is. */
  private newest: NearEntry | undefined;
  private bytes = 0;
  /** The newest invalidation epoch announced or read; entries read with an older one are refused. */
  private knownEpoch = 0;
  private live = false;

  constructor(private readonly limits: NearCacheLimits) {}

  get enabled(): boolean {
    return this.live && this.limits.maxBytes > 0 && this.limits.maxEntries > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** An entry read less than maxAgeMs ago (marked recently used), while the copy is live. */
  get(key: string, now: number): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (!this.live || now - entry.readAt >= this.limits.maxAgeMs) {
      this.drop(key, entry);
      return undefined;
    }
    if (entry === this.newest) return entry.answer;
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.newest = entry;
    return entry.answer;
  }

  /** Takes in an entry Redis returned together with invalidation epoch `epoch`; false when refused. */
  offer(answer: CachedAnswer, epoch: number, now: number): boolean {
    if (!this.enabled || answer.invalidated || answer.body === undefined) return false;
    if (epoch < this.knownEpoch || answer.size > this.limits.maxBytes / 16) return false;
    this.forget(answer.key);
    const entry: NearEntry = { answer, readAt: now };
    this.entries.set(answer.key, entry);
    this.newest = entry;
    this.bytes += answer.size;
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.drop(key, entry);
    }
    return true;
  }

  /** An invalidation or purge was announced (or made here), with its epoch when known: all goes. */
  invalidated(epoch?: number): void {
    if (epoch !== undefined && epoch > this.knownEpoch) this.knownEpoch = epoch;
    this.clear();
  }

  /** This key is being stored anew: its old copy must not answer for it (nor give its ETag). */
  forget(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.drop(key, entry);
  }

  /** The channel is not subscribed (announcements may be lost): emptied and unused until `resume`. */
  suspend(): void {
    this.live = false;
    this.clear();
  }

  /** Subscribed again; `epoch` is Redis's epoch read after the subscription was confirmed. */
  resume(epoch: number): void {
    this.invalidated(epoch);
    this.live = true;
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(key: string, entry: NearEntry): void {
    this.entries.delete(key);
    this.bytes -= entry.answer.size;
  }
}
