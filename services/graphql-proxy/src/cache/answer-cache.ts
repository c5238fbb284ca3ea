import type { CachedAnswer } from './response-cache.js';

/** What `POST /cache/purge` removes. */
export type PurgeSelector =
  | { readonly kind: 'all' }
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'type'; readonly type: string; readonly id?: string | undefined };

/** Whether an entry's tags are selected by a purge (the file store's predicate). */
export function purgeMatches(
  selector: PurgeSelector,
  answer: { key: string; tags: readonly string[] },
): boolean {
  switch (selector.kind) {
    case 'all':
      return true;
    case 'key':
      return answer.key === selector.key;
    case 'type':
      return (
        answer.tags.includes(selector.type) &&
        (selector.id === undefined || answer.tags.includes(`id:${selector.id}`))
      );
  }
}

/**
 * The response cache as the request path, the replayer and the routes use it; implemented by the
 * file-backed `ResponseCache` (one instance) and `RedisResponseCache` (a fleet sharing Redis).
 */
export interface AnswerCache {
  /**
   * True when entries live outside the process: `peek` knows only the near copy of recent reads
   * (emptied by every invalidation in the fleet), and a lookup it cannot answer is a `get` (one Redis
   * round trip).
   */
  readonly shared: boolean;
  /** Changes whenever this instance learns of an invalidation or purge (its own or another instance's). */
  readonly epoch: number;
  peek(key: string): CachedAnswer | undefined;
  get(key: string): Promise<CachedAnswer | undefined>;
  put(
    key: string,
    body: string,
    tags: readonly string[],
    now: number,
    invalidated?: boolean,
    ttlMs?: number,
  ): Promise<void>;
  /** Marks entries sharing a tag as invalidated (never fresh again; still usable stale-if-error). */
  invalidate(mutationTags: ReadonlySet<string>): number | Promise<number>;
  /** Removes entries (gone, not even served stale); returns how many. */
  purgeBy(selector: PurgeSelector): Promise<number>;
  /** Entries and bytes held (the fleet's, for a shared cache). */
  sizes(): Promise<{ entries: number; bytes: number }>;
}
