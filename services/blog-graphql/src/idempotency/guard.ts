import { createHash } from 'node:crypto';
import type { BlogStore } from '../store/file-store.js';
import type { IdempotentAnswer } from './records.js';
import { type GraphQLRequestParts, operationHash, requestPartsOf } from './request-hash.js';

/**
 * `Idempotency-Key` support: the answer to a mutation carrying a key is stored and replayed for a
 * repeated request with the same key and the same body, without executing it again. The GraphQL
 * proxy relies on it when it replays a queued mutation whose first answer was lost. Only a request
 * that changed something is stored (issue 41: anonymous queries with keys of their own grew the
 * store without bound): the record is reserved in the same journal line as the mutation's changes,
 * so a crash between executing and storing the answer is reported as `IDEMPOTENT_ANSWER_LOST`
 * instead of executing again. A query, or a mutation that failed and changed nothing, leaves no
 * record (executing it again is safe). The key is scoped by the caller's credentials; the records
 * are bounded (records.ts).
 */

/** What the blog knows of one key (sent with the caller's credentials): `idempotencyKey` query. */
export type IdempotencyKeyRecord =
  | {
      /**
       * `APPLIED`: executed, its answer stored (`response`); `ANSWER_LOST`: executed, the process
       * died before the answer was stored; `NOT_APPLIED`: no request with this key changed anything.
       */
      readonly state: 'APPLIED' | 'ANSWER_LOST' | 'NOT_APPLIED';
      /** The stored answer (JSON text) of an applied request. */
      readonly response: string | null;
      /** How many requests with this key reached this process (kept in memory, since its start). */
      readonly arrivals: number;
    }
  /** The key's record is of another request (another operation or other variables). */
  | { readonly state: 'OTHER_REQUEST' }
  /** The store is reading itself back after a failed write: ask again later. */
  | { readonly state: 'STORE_UNAVAILABLE' };

/** How many keys' arrival counts are kept (the oldest are forgotten first). */
const ARRIVALS_KEPT = 100_000;

/**
 * The record a request may reserve when a mutation of it changes something (in the request's context,
 * read by `mutateOrThrow`); `reserved` tells `run` to store the answer.
 */
export interface PendingRecord {
  readonly recordKey: string;
  readonly record: IdempotentAnswer;
  reserved: boolean;
}

export type IdempotencyDecision =
  | { kind: 'replay'; body: string }
  | { kind: 'conflict' }
  | { kind: 'lost' }
  /** The store is reading itself back after a failed write: its records are not facts yet. */
  | { kind: 'unavailable' }
  | { kind: 'execute'; pending: PendingRecord };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Keys are scoped by the caller's credentials: another caller's key is another record. */
const recordKeyOf = (key: string, credential: string): string => sha256(`${credential}:${key}`);

export class IdempotencyGuard {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Requests with a key that reached this process, by record key (Map order: oldest first). */
  private readonly arrivals = new Map<string, number>();

  constructor(
    private readonly store: BlogStore,
    private readonly now: () => number,
  ) {}

  /** Waits for an in-flight request with the same key, then says whether to replay or execute. */
  async decide(key: string, authorization: string, body: string): Promise<IdempotencyDecision> {
    const credential = sha256(authorization);
    const recordKey = recordKeyOf(key, credential);
    this.countArrival(recordKey);
    const requestHash = sha256(body);
    await this.settled(recordKey);
    if (!(await this.store.consistent())) return { kind: 'unavailable' };
    const stored = this.store.answers.get(recordKey, this.now());
    if (stored !== undefined) {
      if (stored.requestHash !== requestHash) return { kind: 'conflict' };
      return stored.body === null ? { kind: 'lost' } : { kind: 'replay', body: stored.body };
    }
    const parts = requestPartsOf(body);
    const operation = parts ? operationHash(parts) : undefined;
    return {
      kind: 'execute',
      pending: {
        recordKey,
        record: {
          requestHash,
          ...(operation ? { operationHash: operation } : {}),
          credential,
          body: null,
          storedAt: this.now(),
        },
        reserved: false,
      },
    };
  }

  /**
   * The outcome of a key, for a client that lost track of whether its request arrived (the proxy's
   * replayer after its predecessor died between sending and recording). `request` is the mutation
   * the client holds under the key: a record of another one is `OTHER_REQUEST`, never its answer.
   * Waits for a request with the key that is executing now, so the answer is final. Does not count
   * as an arrival.
   */
  async lookup(
    key: string,
    authorization: string,
    request: GraphQLRequestParts,
  ): Promise<IdempotencyKeyRecord> {
    const recordKey = recordKeyOf(key, sha256(authorization));
    await this.settled(recordKey);
    if (!(await this.store.consistent())) return { state: 'STORE_UNAVAILABLE' };
    const arrivals = this.arrivals.get(recordKey) ?? 0;
    const stored = this.store.answers.get(recordKey, this.now());
    if (stored === undefined) return { state: 'NOT_APPLIED', response: null, arrivals };
    // Records written before issue 41 carry no operation hash and are not checked.
    if (stored.operationHash !== undefined && stored.operationHash !== operationHash(request)) {
      return { state: 'OTHER_REQUEST' };
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

  /**
   * Runs `execute` while holding the key; stores the answer when a mutation of the request reserved
   * the record (it changed something), whatever the answer says (a partly executed request too).
   */
  async run(
    pending: PendingRecord,
    execute: () => Promise<{ status: number; body: string }>,
  ): Promise<{ status: number; body: string }> {
    let release: () => void = () => undefined;
    this.inFlight.set(
      pending.recordKey,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    try {
      const answer = await execute();
      if (pending.reserved) {
        await this.store.storeAnswer(pending.recordKey, {
          ...pending.record,
          body: answer.body,
          storedAt: this.now(),
        });
      }
      return answer;
    } finally {
      this.inFlight.delete(pending.recordKey);
      release();
    }
  }
}
