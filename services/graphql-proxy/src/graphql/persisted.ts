import { createHash } from 'node:crypto';

/**
 * Automatic persisted queries (the Apollo `persistedQuery` extension): a client sends the sha256 of
 * its query; when the proxy knows it, the query text need not be sent. Kept in memory, bounded in
 * bytes, least recently used dropped first.
 */
export class PersistedQueries {
  private readonly queries = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  static hash(query: string): string {
    return createHash('sha256').update(query).digest('hex');
  }

  get(hash: string): string | undefined {
    const query = this.queries.get(hash);
    if (query !== undefined) {
      this.queries.delete(hash);
      this.queries.set(hash, query);
    }
    return query;
  }

  /** Remembers a query whose hash the caller has checked. */
  set(hash: string, query: string): void {
    if (this.queries.has(hash) || query.length > this.maxBytes) return;
    this.queries.set(hash, query);
    this.bytes += query.length + hash.length;
    for (const [key, text] of this.queries) {
      if (this.bytes <= this.maxBytes) break;
      this.queries.delete(key);
      this.bytes -= text.length + key.length;
    }
  }
}
