import { createHash } from 'node:crypto';
import type { IdempotentAnswer } from '../domain/model.js';
import type { BlogStore } from '../store/file-store.js';

/**
 * `Idempotency-Key` support: a successful answer to a request carrying a key is stored (with the data
 * file, so it survives restarts) and replayed for a repeated request with the same key and the same
 * body, without executing it again. The GraphQL proxy relies on it when it replays a queued mutation
 * whose first answer was lost. Answers with errors are not stored (a failed mutation changed nothing,
 * so executing it again is safe), unless part of it was executed. The record is reserved in the same
 * state change as the mutation, so a crash between executing and storing the answer is reported as
 * `IDEMPOTENT_ANSWER_LOST` instead of executing again. The key is scoped by the caller's credentials.
 */

/** What the blog knows of one key (sent with the caller's credentials): `idempotencyKey` query. */
export interface IdempotencyKeyRecord {
  /**
   * `APPLIED`: executed, its answer stored (`response`); `ANSWER_LOST`: executed, the process died
   * before the answer was stored; `NOT_APPLIED`: no request with this key changed anything.
   */
  readonly state: 'APPLIED' | 'ANSWER_LOST' | 'NOT_APPLIED';
  /** The stored answer (JSON text) of an applied request. */
  readonly response: string | null;
  /** How many requests with this key reached this process (kept in memory, since its start). */
  readonly arrivals: number;
}

/** How many keys' arrival counts are kept (the oldest are forgotten first). */
const ARRIVALS_KEPT = 100_000;

export type IdempotencyDecision =
  | { kind: 'replay'; body: string }
  | { kind: 'conflict' }
  | { kind: 'lost' }
  | { kind: 'execute'; recordKey: string; requestHash: string };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Keys are scoped by the caller's credentials: another caller's key is another record. */
const recordKeyOf = (key: string, authorization: string): string => sha256(`${sha256(authorization)}:${key}`);

export class IdempotencyGuard {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Requests with a key that reached this process, by record key (Map order: oldest first). */
  private readonly arrivals = new Map<string, number>();

  constructor(
    private readonly store: BlogStore,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Waits for an in-flight request with the same key, then says whether to replay or execute. */
  async decide(key: string, authorization: string, body: string): Promise<IdempotencyDecision> {
    const recordKey = recordKeyOf(key, authorization);
    this.countArrival(recordKey);
    const requestHash = sha256(body);
    await this.settled(recordKey);
    const stored: IdempotentAnswer | undefined = this.store.current.idempotency[recordKey];
    if (stored !== undefined && this.now() - stored.storedAt < this.ttlMs) {
      if (stored.requestHash !== requestHash) return { kind: 'conflict' };
      return stored.body === null ? { kind: 'lost' } : { kind: 'replay', body: stored.body };
    }
    return { kind: 'execute', recordKey, requestHash };
  }

  /**
   * The outcome of a key, for a client that lost track of whether its request arrived (the proxy's
   * replayer after its predecessor died between sending and recording). Waits for a request with the
   * key that is executing now, so the answer is final. Does not count as an arrival.
   */
  async lookup(key: string, authorization: string): Promise<IdempotencyKeyRecord> {
    const recordKey = recordKeyOf(key, authorization);
    await this.settled(recordKey);
    const arrivals = this.arrivals.get(recordKey) ?? 0;
    const stored: IdempotentAnswer | undefined = this.store.current.idempotency[recordKey];
    if (stored === undefined || this.now() - stored.storedAt >= this.ttlMs) {
      return { state: 'NOT_APPLIED', response: null, arrivals };
    }
    return stored.body === null
      ? { state: 'ANSWER_LOST', response: null, arrivals }
      : { state: 'APPLIED', response: stored.body, arrivals };
  }

  private async settled(recordKey: string): Promise<void> {
    for (;;) {
      const pending = this.inFlight.get(recordKey);
      if (pending === undefined) return;
      await pending;
    }
  }

  private countArrival(recordKey: string): void {
    const count = (this.arrivals.get(recordKey) ?? 0) + 1;
    this.arrivals.delete(recordKey);
    this.arrivals.set(recordKey, count);
    if (this.arrivals.size > ARRIVALS_KEPT) {
      for (const oldest of this.arrivals.keys()) {
        this.arrivals.delete(oldest);
        break;
      }
    }
  }

  /** Runs `execute` while holding the key, storing the answer when `keep(answer)` says so. */
  async run(
    decision: { recordKey: string; requestHash: string },
    execute: () => Promise<{ status: number; body: string }>,
    keep: (answer: { status: number; body: string }) => boolean,
  ): Promise<{ status: number; body: string }> {
    let release: () => void = () => undefined;
    this.inFlight.set(
      decision.recordKey,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    try {
      const answer = await execute();
      // Kept when it succeeded, and always when a mutation of it was executed (reserved record).
      if (keep(answer) || this.store.current.idempotency[decision.recordKey] !== undefined) {
        const now = this.now();
        await this.store.mutate((draft) => {
          for (const [key, value] of Object.entries(draft.idempotency)) {
            if (now - value.storedAt >= this.ttlMs) delete draft.idempotency[key];
          }
          draft.idempotency[decision.recordKey] = {
            requestHash: decision.requestHash,
            body: answer.body,
            storedAt: now,
          };
          return { ok: true };
        });
      }
      return answer;
    } finally {
      this.inFlight.delete(decision.recordKey);
      release();
    }
  }
}
