import type { CachedAnswer } from '../cache/response-cache.js';

/**
 * The answer of a fresh cache hit, kept to be handed out again (issue 46). Its headers change only
 * with the entry (key, body, ETag, storedAt, lifetime), the caller's scope (public or private) and the
 * whole seconds of `Age` and `max-age`: a repeated hit within the same second gets the same answer
 * object, so neither its header record nor (in the transport, `ProxyAnswer.head`) its flattened
 * header list is built again. Anything that changed builds a new one.
 */
export interface ReusedHit<Answer> {
  readonly entry: CachedAnswer;
  readonly body: Buffer;
  readonly storedAt: number;
  readonly etag: string;
  readonly ttlMs: number;
  readonly key: string;
  readonly scope: string;
  readonly age: number;
  readonly maxAge: number;
  readonly answer: Answer;
}

/** Whole seconds of `Age` and `max-age` of a fresh entry at `now` (RFC 9111 section 5.1: rounded down). */
export function hitSeconds(entry: CachedAnswer, ttlMs: number, now: number): { age: number; maxAge: number } {
  const ageMs = Math.max(0, now - entry.storedAt);
  return { age: Math.floor(ageMs / 1000), maxAge: Math.max(0, Math.floor((ttlMs - ageMs) / 1000)) };
}

/** Whether `kept` says exactly what a new answer for this entry, key and scope would say now. */
export function stillSays<Answer>(
  kept: ReusedHit<Answer> | undefined,
  entry: CachedAnswer,
  ttlMs: number,
  key: string,
  scope: string,
  age: number,
  maxAge: number,
): kept is ReusedHit<Answer> {
  return (
    kept !== undefined &&
    kept.entry === entry &&
    kept.body === entry.body &&
    kept.storedAt === entry.storedAt &&
    kept.etag === entry.etag &&
    kept.ttlMs === ttlMs &&
    kept.key === key &&
    kept.scope === scope &&
    kept.age === age &&
    kept.maxAge === maxAge
  );
}
