/**
 * Pure cache and retry policy: freshness of an entry, the tags a response carries, backoff. The
 * clock reading is passed in.
 */

export type Freshness = 'fresh' | 'revalidate' | 'stale' | 'unusable';

/**
 * `fresh` while younger than the TTL (served without asking upstream); `revalidate` while younger
 * than TTL + stale-while-revalidate (served at once, refreshed in the background, RFC 5861 section 3);
 * `stale` while younger than TTL + stale-if-error (served only when upstream fails, RFC 5861 section
 * 4); `unusable` after that. An invalidated entry is known to be outdated: never fresh nor revalidate.
 */
export function freshness(
  entry: { storedAt: number; invalidated: boolean },
  now: number,
  ttlMs: number,
  staleIfErrorMs: number,
  staleWhileRevalidateMs = 0,
): Freshness {
  const age = now - entry.storedAt;
  if (!entry.invalidated && age < ttlMs) return 'fresh';
  if (!entry.invalidated && age < ttlMs + staleWhileRevalidateMs) return 'revalidate';
  if (age < ttlMs + staleIfErrorMs) return 'stale';
  return 'unusable';
}

/** What the proxy honours of an upstream Cache-Control header (RFC 9111 section 5.2.2). */
export interface UpstreamCacheControl {
  readonly noStore: boolean;
  readonly private: boolean;
  /** `s-maxage` (for shared caches) or else `max-age`, in ms. */
  readonly maxAgeMs: number | undefined;
}

export function parseCacheControl(header: string | undefined): UpstreamCacheControl {
  if (header === undefined || header === '') return { noStore: false, private: false, maxAgeMs: undefined };
  let noStore = false;
  let isPrivate = false;
  let maxAge: number | undefined;
  let sMaxAge: number | undefined;
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', value] = part.trim().split('=', 2);
    const seconds = value === undefined ? Number.NaN : Number(value.replace(/"/g, ''));
    if (name === 'no-store' || name === 'no-cache') noStore = true;
    else if (name === 'private') isPrivate = true;
    else if (name === 'max-age' && Number.isInteger(seconds) && seconds >= 0) maxAge = seconds;
    else if (name === 's-maxage' && Number.isInteger(seconds) && seconds >= 0) sMaxAge = seconds;
  }
  const chosen = sMaxAge ?? maxAge;
  return { noStore, private: isPrivate, maxAgeMs: chosen === undefined ? undefined : chosen * 1000 };
}

/**
 * The freshness lifetime of an answer to store, or `undefined` when it must not be stored:
 * `no-store` (and `no-cache`, which would need revalidation on every use), `private` in the shared
 * anonymous scope, `max-age=0`. The upstream's `s-maxage`/`max-age` wins; else the smallest
 * CACHE_TTL_BY_TYPE of the types the answer holds; else CACHE_TTL_SECONDS.
 */
export function storedLifetime(
  control: UpstreamCacheControl,
  sharedScope: boolean,
  tags: Iterable<string>,
  typeTtlsMs: ReadonlyMap<string, number>,
  defaultTtlMs: number,
): number | undefined {
  if (control.noStore || (control.private && sharedScope)) return undefined;
  if (control.maxAgeMs !== undefined) return control.maxAgeMs > 0 ? control.maxAgeMs : undefined;
  let ttl: number | undefined;
  if (typeTtlsMs.size > 0) {
    for (const tag of tags) {
      const typeTtl = typeTtlsMs.get(tag);
      if (typeTtl !== undefined && (ttl === undefined || typeTtl < ttl)) ttl = typeTtl;
    }
  }
  return ttl ?? defaultTtlMs;
}

const MAX_IDS = 500;

/**
 * Tags found in a GraphQL `data` tree: `id:<id>` for every string `id` field and the `__typename`
 * values, so that a mutation of that object or type invalidates the entry.
 */
export function tagsInData(data: unknown, into: Set<string> = new Set()): Set<string> {
  const stack: unknown[] = [data];
  let ids = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    for (const [key, field] of Object.entries(value)) {
      if (key === 'id' && typeof field === 'string' && ids < MAX_IDS) {
        into.add(`id:${field}`);
        ids += 1;
      } else if (key === '__typename' && typeof field === 'string') {
        into.add(field);
      } else if (typeof field === 'object') {
        stack.push(field);
      }
    }
  }
  return into;
}

/** True when two tag lists share a tag, or the mutation tags contain the wildcard `*`. */
export function touches(entryTags: readonly string[], mutationTags: ReadonlySet<string>): boolean {
  if (mutationTags.has('*')) return true;
  return entryTags.some((tag) => mutationTags.has(tag));
}

/** Exponential backoff: base, 2*base, 4*base, ... capped at max. `attempts` counts failed tries (>= 1). */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}
