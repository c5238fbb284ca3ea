import type { AnalysedOperation } from '../graphql/document.js';
import type { QueuedPayload } from '../queue/store.js';
import type { ProxyAnswer } from './graphql-handler.js';
import type { ReusedHit } from './hit-answer.js';

/**
 * The exact-bytes fast path of a repeated query (issue 46). Everything the handler does with a POST
 * body before it asks the cache (JSON parse, the limits, parsing the GraphQL request, the document's
 * analysis) is a pure function of the body's text, and clients send the same few bodies again and
 * again: a body that was a query and passed every check is remembered by its text, and the next
 * request with the same text goes straight to the cache lookup.
 *
 * What is remembered is the analysis, never an answer: the caller's scope and the cache key are
 * computed for every request (`keyFor`), so a remembered body sent by another caller looks up that
 * caller's entry, and the cache's freshness and invalidation apply as on the full path. Bodies with
 * `extensions` are not remembered (a persisted query's text lives in a store that may forget it).
 * Bounded in entries and bytes, least recently used dropped first.
 */

export interface RecalledQuery {
  readonly operation: AnalysedOperation;
  readonly payload: QueuedPayload;
  /** The last scope this body was looked up in and its cache key (one caller usually repeats itself). */
  lastScope: string | undefined;
  lastKey: string;
  /** The answer of this body's last fresh hit, handed out again while its headers are unchanged. */
  lastHit: ReusedHit<ProxyAnswer> | undefined;
}

export interface RequestMemoLimits {
  /** Bodies remembered. @default 1000 */
  readonly maxEntries?: number;
  /** Characters of remembered bodies, their analyses counted roughly. @default 4 MiB */
  readonly maxBytes?: number;
  /** Longer bodies are not remembered. @default 16 KiB */
  readonly maxBodyLength?: number;
}

/** What one entry keeps alive besides its body text, roughly (analysis, payload, map slot). */
const OVERHEAD = 512;

export class RequestMemo {
  private readonly memo = new Map<string, RecalledQuery>();
  /** The most recently used entry: recalling it again leaves the order as it is. */
  private newest: RecalledQuery | undefined;
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly maxBodyLength: number;

  constructor(limits: RequestMemoLimits = {}) {
    this.maxEntries = limits.maxEntries ?? 1000;
    this.maxBytes = limits.maxBytes ?? 4 * 1024 * 1024;
    this.maxBodyLength = limits.maxBodyLength ?? 16 * 1024;
  }

  get size(): number {
    return this.memo.size;
  }

  /** The remembered query of a body's exact text; marks it recently used. */
  recall(text: string): RecalledQuery | undefined {
    const known = this.memo.get(text);
    if (known === undefined || known === this.newest) return known;
    // Re-inserted to be the last in the map's order (the least recently used is the first).
    this.memo.delete(text);
    this.memo.set(text, known);
    this.newest = known;
    return known;
  }

  /**
   * Remembers a body that the full path found to be a query passing every check. `body` is the
   * parsed text: bodies with `extensions` (persisted queries) are left to the full path.
   */
  remember(text: string, body: unknown, operation: AnalysedOperation, payload: QueuedPayload): void {
    if (operation.kind !== 'query' || text.length > this.maxBodyLength) return;
    if (body === null || typeof body !== 'object' || 'extensions' in body) return;
    if (this.memo.has(text)) return;
    const size = text.length + OVERHEAD;
    const entry: RecalledQuery = {
      operation,
      payload,
      lastScope: undefined,
      lastKey: '',
      lastHit: undefined,
    };
    this.memo.set(text, entry);
    this.newest = entry;
    this.bytes += size;
    for (const [oldest] of this.memo) {
      if (this.memo.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.memo.delete(oldest);
      this.bytes -= oldest.length + OVERHEAD;
    }
  }
}
