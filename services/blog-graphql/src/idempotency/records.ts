/**
 * The stored answers of mutations sent with an `Idempotency-Key`, bounded (issue 41: 600 anonymous
 * queries with keys of their own grew the data file from 6 kB to 924 kB, kept 24 hours). Only a
 * mutation that changed something gets a record (guard.ts); the records are kept oldest first and
 * bounded per credential and in total, in count and in bytes, the oldest dropped first, and expire
 * after the TTL. Pure: the clock is an argument; the store journals what `put` returns.
 */

/**
 * What is kept for one key (and credentials). Reserved with `body: null` in the same state change as
 * the mutation (executed, answer not stored yet), then completed with the answer; `null` after a
 * restart means the answer was lost in a crash.
 */
export interface IdempotentAnswer {
  /** sha256 of the request body as sent: a repeat with another body is `IDEMPOTENCY_KEY_REUSED`. */
  readonly requestHash: string;
  /**
   * sha256 of the normalised request (request-hash.ts): the `idempotencyKey` question must name the
   * same operation and variables. Absent in records written before issue 41 (not checked).
   */
  readonly operationHash?: string;
  /** sha256 of the `Authorization` header, for the per-credential bound (absent before issue 41). */
  readonly credential?: string;
  readonly body: string | null;
  readonly storedAt: number;
}

export interface IdempotencyBounds {
  /** `IDEMPOTENCY_TTL_SECONDS`, in ms. */
  readonly ttlMs: number;
  /** `IDEMPOTENCY_MAX_KEYS`: records kept in total. */
  readonly maxKeys: number;
  /** `IDEMPOTENCY_MAX_KEYS_PER_CREDENTIAL`: records kept for one `Authorization`. */
  readonly maxKeysPerCredential: number;
  /** `IDEMPOTENCY_MAX_BYTES`: stored answers' size in total. */
  readonly maxBytes: number;
}

/** Bytes a record counts for: its answer (UTF-8) and a fixed part for its key, hashes and time. */
function sizeOf(record: IdempotentAnswer): number {
  return (record.body === null ? 0 : Buffer.byteLength(record.body)) + 320;
}

export class IdempotencyRecords {
  /** By record key, oldest first (a record put again moves to the end). */
  private readonly byKey = new Map<string, IdempotentAnswer>();
  /** Record keys by credential, oldest first. */
  private readonly byCredential = new Map<string, Set<string>>();
  private totalBytes = 0;

  constructor(private readonly bounds: IdempotencyBounds) {}

  get size(): number {
    return this.byKey.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** The live record of `key` (an expired one is not: it is dropped at the next `put` or `expire`). */
  get(key: string, now: number): IdempotentAnswer | undefined {
    const record = this.byKey.get(key);
    return record !== undefined && now - record.storedAt < this.bounds.ttlMs ? record : undefined;
  }

  /** Records `key` and drops what the bounds and the TTL say; returns the keys dropped (to journal). */
  put(key: string, record: IdempotentAnswer, now: number): string[] {
    this.set(key, record);
    return [...this.expire(now), ...this.enforce(record.credential ?? '', key)];
  }

  /** Applies a journalled change as it was made (no bounds: the drops are journalled too). */
  set(key: string, record: IdempotentAnswer): void {
    this.remove(key);
    this.byKey.set(key, record);
    const credential = record.credential ?? '';
    let keys = this.byCredential.get(credential);
    if (keys === undefined) {
      keys = new Set();
      this.byCredential.set(credential, keys);
    }
    keys.add(key);
    this.totalBytes += sizeOf(record);
  }

  remove(key: string): boolean {
    const record = this.byKey.get(key);
    if (record === undefined) return false;
    this.byKey.delete(key);
    const credential = record.credential ?? '';
    const keys = this.byCredential.get(credential);
    keys?.delete(key);
    if (keys?.size === 0) this.byCredential.delete(credential);
    this.totalBytes -= sizeOf(record);
    return true;
  }

  /** Drops the records older than the TTL (the oldest are first, so this stops at the first live one). */
  expire(now: number): string[] {
    const dropped: string[] = [];
    for (const [key, record] of this.byKey) {
      if (now - record.storedAt < this.bounds.ttlMs) break;
      this.remove(key);
      dropped.push(key);
    }
    return dropped;
  }

  /**
   * Drops the oldest records while a bound is passed: the credential's own first, then any. `keep`
   * (the record just put) goes last, so a lone answer larger than the byte bound is still kept.
   */
  enforce(credential?: string, keep?: string): string[] {
    const dropped: string[] = [];
    const drop = (key: string) => {
      this.remove(key);
      dropped.push(key);
    };
    const credentials = credential === undefined ? [...this.byCredential.keys()] : [credential];
    for (const name of credentials) {
      const keys = this.byCredential.get(name);
      while (keys !== undefined && keys.size > this.bounds.maxKeysPerCredential) {
        const oldest = keys.values().next().value as string;
        if (oldest === keep) break;
        drop(oldest);
      }
    }
    while (this.byKey.size > this.bounds.maxKeys || this.totalBytes > this.bounds.maxBytes) {
      const oldest = this.byKey.keys().next().value as string;
      if (oldest === keep) break;
      drop(oldest);
    }
    return dropped;
  }

  /** Oldest first, as the snapshot stores them (a JSON object keeps its keys' order). */
  entries(): IterableIterator<[string, IdempotentAnswer]> {
    return this.byKey.entries();
  }
}
