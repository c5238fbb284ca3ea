/**
 * A read-through cache in front of an `EventStore`: `get` and `list` answers are kept in memory
 * until anything changes. Any write through this instance clears it before the write returns; writes
 * by other instances clear it when their change notification arrives (`ChangeFeed`). While the feed
 * is down the cache is bypassed, so a lost notification can never keep stale data.
 *
 * A read stores its answer only if no change happened while it ran (generation check), so an answer
 * read before a write can never be cached after it.
 *
 * Admission: an answer is kept only from the second request of its key since the last change (a
 * "doorkeeper" of keys asked for, no values, cleared with the answers). Reads spread evenly over many
 * ids and pages ask for nearly every key once before the next write clears the cache; keeping those
 * answers gained nothing and cost a lot: each kept page of 100 events outlives a few scavenges and is
 * copied by each (measured on the mix benchmark: GC 19% of the service's CPU with the cache, 5%
 * without). A doorkeeper that outlived changes admitted every one of the 900 pages after warm-up, so
 * the list mix paid that again (GC 182 us per list read against the bare route's 47 us). Repeated
 * reads, what the cache is for, are kept from their second request after each change on.
 */
import type { StoredEvent } from '../domain/event.js';
import type { ListPosition } from '../domain/pagination.js';
import type { EventPage, EventStore, ListScope } from './event-store.js';

/** Change notifications from other writers of the same database. */
export interface ChangeFeed {
  /** `onChange` on every committed change; `onState(false)` when notifications may be missed. */
  start(onChange: () => void, onState: (live: boolean) => void): Promise<void>;
  stop(): Promise<void>;
}

/** What the cache counts for the metrics (plain fields: the read path only increments one). */
export interface CacheCounters {
  hits: number;
  misses: number;
  /** Times the cache was cleared (a write, a change notification, the feed going down or up). */
  invalidations: number;
  /** Whether cached answers are served (false while the change feed is down). */
  live: boolean;
}

export interface CacheOptions {
  /** Entries kept (events and pages together), oldest dropped first. @default 5000 */
  maxEntries: number;
  /** Notifications of other instances; omitted when this process is the only writer (PGlite). */
  feed?: ChangeFeed;
  /** Counted into when given (`src/metrics/`). */
  counters?: CacheCounters;
}

type Entry = { kind: 'event'; value: StoredEvent | undefined } | { kind: 'page'; value: EventPage };

function scopeKey(scope: ListScope): string {
  return scope.kind === 'creator' ? `creator:${scope.userId}` : scope.kind;
}

/** The whole position: pages at the same offset or cursor hold the same rows until a change. */
function positionKey(position: ListPosition): string {
  return position.kind === 'offset'
    ? `o:${position.offset}`
    : `${position.kind}:${position.key.atMicros}:${position.key.eventId}`;
}

export async function createCachedEventStore(inner: EventStore, options: CacheOptions): Promise<EventStore> {
  const entries = new Map<string, Entry>();
  let generation = 0;
  // Without a feed this process sees every write itself; with one, only while the feed is live.
  let live = options.feed === undefined;
  const counters: CacheCounters = options.counters ?? { hits: 0, misses: 0, invalidations: 0, live };
  counters.live = live;

  // Keys asked for since the last change (whether kept or not): a key found here is admitted. At
  // most maxEntries keys, then it starts again.
  const seen = new Set<string>();
  const invalidate = (): void => {
    generation += 1;
    counters.invalidations += 1;
    entries.clear();
    seen.clear();
  };
  const admit = (key: string): boolean => {
    if (seen.has(key)) return true;
    if (seen.size >= options.maxEntries) seen.clear();
    seen.add(key);
    return false;
  };
  const remember = (key: string, entry: Entry, startedAt: number): void => {
    if (!live || generation !== startedAt) return;
    if (entries.size >= options.maxEntries) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
    entries.set(key, entry);
  };

  await options.feed?.start(invalidate, (state) => {
    invalidate();
    live = state;
    counters.live = state;
  });

  return {
    async get(eventId) {
      const key = `e:${eventId}`;
      const hit = entries.get(key);
      if (hit?.kind === 'event') {
        counters.hits += 1;
        return hit.value;
      }
      counters.misses += 1;
      const startedAt = generation;
      const admitted = admit(key);
      const value = await inner.get(eventId);
      if (admitted) remember(key, { kind: 'event', value }, startedAt);
      return value;
    },
    async list(scope, position, limit) {
      const key = `l:${scopeKey(scope)}:${positionKey(position)}:${limit}`;
      const hit = entries.get(key);
      if (hit?.kind === 'page') {
        counters.hits += 1;
        return hit.value;
      }
      counters.misses += 1;
      const startedAt = generation;
      const admitted = admit(key);
      const value = await inner.list(scope, position, limit);
      if (admitted) remember(key, { kind: 'page', value }, startedAt);
      return value;
    },
    // Invalidate after the write, whatever its outcome: a refused compare-and-set means the row
    // changed under us, so cached copies of it are stale too.
    insert: (...args) => inner.insert(...args).finally(invalidate),
    replace: (...args) => inner.replace(...args).finally(invalidate),
    remove: (...args) => inner.remove(...args).finally(invalidate),
    ping: () => inner.ping(),
    async close() {
      await options.feed?.stop();
      await inner.close();
    },
  };
}
