import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { type AnswerCache, type PurgeSelector, purgeMatches } from './answer-cache.js';
import { touches } from './policy.js';
import type { CacheStore, StoredEntry } from './store.js';

export interface CacheLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** Bodies kept in memory, so that a hit on a recently used entry needs no disk read. */
  readonly memoryBytes: number;
}

/** What the proxy knows about an entry without reading it. `body` is present when it is in memory. */
export interface CachedAnswer {
  readonly key: string;
  storedAt: number;
  tags: readonly string[];
  invalidated: boolean;
  /** This entry's freshness lifetime; undefined: the configured default. */
  ttlMs: number | undefined;
  /** Strong validator of the body (`ETag`), computed once when stored. */
  etag: string;
  size: number;
  body: Buffer | undefined;
}

/** A strong ETag for a body: a quoted prefix of its sha256. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
}

/**
 * The cache index in front of a `CacheStore`: least-recently-used order (a Map re-inserted on every
 * use), a bound on entries and bytes with eviction of the least recently used, bodies of the hottest
 * entries in memory, and invalidation by tags.
 */
/** Disk writes of one key in progress: `latest` is the newest version, not yet confirmed on disk. */
interface WriteSlot {
  next: StoredEntry | undefined;
  latest: StoredEntry;
  done: Promise<void>;
}

export class ResponseCache implements AnswerCache {
  /** Entries live in this process (bodies in memory, files on disk). */
  readonly shared = false;
  private readonly index = new Map<string, CachedAnswer>();
  /** The most recently used entry (the last in `index`): peeking it again leaves the order as it is. */
  private newest: CachedAnswer | undefined;
  private bytes = 0;
  private memoryBytes = 0;
  private readonly writes = new Map<string, WriteSlot>();
  private invalidations = 0;

  private constructor(
    private readonly store: CacheStore,
    private readonly limits: CacheLimits,
    private readonly logger: Logger,
  ) {}

  /** Loads the index from the store, oldest first, and applies the bounds. */
  static async open(store: CacheStore, limits: CacheLimits, logger: Logger): Promise<ResponseCache> {
    const cache = new ResponseCache(store, limits, logger);
    const entries = await store.list();
    entries.sort((a, b) => a.storedAt - b.storedAt);
    for (const entry of entries) cache.remember(entry, false);
    await cache.evict();
    return cache;
  }

  get stats(): { entries: number; bytes: number; memoryBytes: number } {
    return { entries: this.index.size, bytes: this.bytes, memoryBytes: this.memoryBytes };
  }

  /**
   * Counts invalidations. An answer fetched while a mutation invalidated the cache may predate the
   * mutation: callers compare the epoch from before the fetch and store such an answer as invalidated.
   */
  get epoch(): number {
    return this.invalidations;
  }

  /** The entry's metadata (and body when in memory) without touching the disk; marks it recently used. */
  peek(key: string): CachedAnswer | undefined {
    const answer = this.index.get(key);
    if (answer === undefined || answer === this.newest) return answer;
    this.index.delete(key);
    this.index.set(key, answer);
    this.newest = answer;
    return answer;
  }

  /** The entry with its body, read from the store when not in memory; a corrupt file is a miss. */
  async get(key: string): Promise<CachedAnswer | undefined> {
    const answer = this.peek(key);
    if (answer === undefined || answer.body !== undefined) return answer;
    // A body whose file is still being written is taken from the write in progress.
    const stored = this.writes.get(key)?.latest ?? (await this.store.read(key));
    if (stored === undefined) {
      this.forget(key);
      this.logger.warn({ cacheKey: key }, 'cache entry missing or corrupt on disk; treated as a miss');
      return undefined;
    }
    const body = Buffer.from(stored.body);
    if (
      this.index.get(key) === answer &&
      answer.body === undefined &&
      answer.size <= this.limits.memoryBytes
    ) {
      answer.body = body;
      this.memoryBytes += answer.size;
      this.trimMemory();
    }
    // A snapshot: the index may drop the body from memory at any time, the caller keeps this one.
    return { ...answer, body };
  }

  /**
   * Stores an answer: in the index and memory at once (so the next identical query is a hit), on disk
   * before the promise resolves. Disk writes of one key are coalesced: while one is in progress only
   * the newest pending version is written next. Callers on the request path need not wait.
   */
  async put(
    key: string,
    body: string,
    tags: readonly string[],
    now: number,
    invalidated = false,
    ttlMs?: number,
  ): Promise<void> {
    const entry: StoredEntry = { key, storedAt: now, tags, invalidated, ttlMs, body };
    this.remember(entry, true);
    const evicted = this.evict();
    await this.writeCoalesced(entry);
    await evicted;
  }

  private writeCoalesced(entry: StoredEntry): Promise<void> {
    const pending = this.writes.get(entry.key);
    if (pending) {
      pending.next = entry;
      pending.latest = entry;
      return pending.done;
    }
    const slot: WriteSlot = { next: entry, latest: entry, done: Promise.resolve() };
    this.writes.set(entry.key, slot);
    slot.done = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (slot.next !== undefined) {
        const current = slot.next;
        slot.next = undefined;
        // An entry evicted or replaced meanwhile is not resurrected on disk.
        if (this.index.get(current.key)?.storedAt !== current.storedAt) continue;
        try {
          await this.store.write(current);
        } catch (error) {
          this.logger.error({ err: error, cacheKey: current.key }, 'could not write a cache entry');
        }
      }
      this.writes.delete(entry.key);
    })();
    return slot.done;
  }

  /**
   * Marks every entry sharing a tag with `mutationTags` as invalidated: never fresh again, but still
   * usable as a stale answer when the upstream fails. Returns how many entries were touched.
   */
  invalidate(mutationTags: ReadonlySet<string>): number {
    this.invalidations += 1;
    let count = 0;
    for (const answer of this.index.values()) {
      if (answer.invalidated || !touches(answer.tags, mutationTags)) continue;
      answer.invalidated = true;
      count += 1;
      void this.persistInvalidation(answer);
    }
    return count;
  }

  /**
   * Removes the entries `matches` selects (the purge API) from the index and the store; returns how
   * many. They are gone, not just invalidated: not even served as stale.
   */
  async purge(matches: (answer: CachedAnswer) => boolean): Promise<number> {
    this.invalidations += 1; // answers in flight from before the purge are stored as invalidated
    const victims = [...this.index.values()].filter(matches).map((answer) => answer.key);
    for (const key of victims) this.forget(key);
    for (const key of victims) {
      try {
        await this.store.remove(key);
      } catch (error) {
        this.logger.warn({ err: error, cacheKey: key }, 'could not remove a purged cache entry');
      }
    }
    return victims.length;
  }

  /** `purge` by a selector of the purge API. */
  purgeBy(selector: PurgeSelector): Promise<number> {
    return this.purge((answer) => purgeMatches(selector, answer));
  }

  async sizes(): Promise<{ entries: number; bytes: number }> {
    return { entries: this.index.size, bytes: this.bytes };
  }

  private async persistInvalidation(answer: CachedAnswer): Promise<void> {
    try {
      const stored = await this.store.read(answer.key);
      if (stored && stored.storedAt === answer.storedAt)
        await this.store.write({ ...stored, invalidated: true });
    } catch (error) {
      this.logger.warn({ err: error, cacheKey: answer.key }, 'could not persist a cache invalidation');
    }
  }

  private remember(entry: StoredEntry, keepBody: boolean): void {
    const previous = this.index.get(entry.key);
    this.forget(entry.key);
    const body = Buffer.from(entry.body);
    const answer: CachedAnswer = {
      key: entry.key,
      storedAt: entry.storedAt,
      tags: entry.tags,
      invalidated: entry.invalidated,
      ttlMs: entry.ttlMs,
      // A refreshed entry usually has the same bytes (every miss refreshes it with CACHE_TTL_SECONDS=0):
      // comparing them is cheaper than hashing them again.
      etag: previous?.body?.equals(body) ? previous.etag : etagOf(body),
      size: body.length,
      body: keepBody || this.memoryBytes + body.length <= this.limits.memoryBytes ? body : undefined,
    };
    this.index.set(entry.key, answer);
    this.newest = answer;
    this.bytes += answer.size;
    if (answer.body) this.memoryBytes += answer.size;
    this.trimMemory();
  }

  private forget(key: string): void {
    const answer = this.index.get(key);
    if (answer === undefined) return;
    this.index.delete(key);
    this.bytes -= answer.size;
    if (answer.body) this.memoryBytes -= answer.size;
  }

  /** Drops bodies from memory, least recently used first, until under the memory budget. */
  private trimMemory(): void {
    if (this.memoryBytes <= this.limits.memoryBytes) return;
    for (const answer of this.index.values()) {
      if (this.memoryBytes <= this.limits.memoryBytes) break;
      if (answer.body === undefined) continue;
      answer.body = undefined;
      this.memoryBytes -= answer.size;
    }
  }

  /** Removes least recently used entries until within the entry and byte bounds. */
  private async evict(): Promise<void> {
    const victims: string[] = [];
    for (const key of this.index.keys()) {
      if (this.index.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      victims.push(key);
      this.forget(key);
    }
    for (const key of victims) {
      try {
        await this.store.remove(key);
      } catch (error) {
        this.logger.warn({ err: error, cacheKey: key }, 'could not remove an evicted cache entry');
      }
    }
  }
}
