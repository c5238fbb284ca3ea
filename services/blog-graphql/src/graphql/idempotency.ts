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

export type IdempotencyDecision =
  | { kind: 'replay'; body: string }
  | { kind: 'conflict' }
  | { kind: 'lost' }
  | { kind: 'execute'; recordKey: string; requestHash: string };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export class IdempotencyGuard {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly store: BlogStore,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Waits for an in-flight request with the same key, then says whether to replay or execute. */
  async decide(key: string, authorization: string, body: string): Promise<IdempotencyDecision> {
    const recordKey = sha256(`${sha256(authorization)}:${key}`);
    const requestHash = sha256(body);
    for (;;) {
      const pending = this.inFlight.get(recordKey);
      if (pending === undefined) break;
      await pending;
    }
    const stored: IdempotentAnswer | undefined = this.store.current.idempotency[recordKey];
    if (stored !== undefined && this.now() - stored.storedAt < this.ttlMs) {
      if (stored.requestHash !== requestHash) return { kind: 'conflict' };
      return stored.body === null ? { kind: 'lost' } : { kind: 'replay', body: stored.body };
    }
    return { kind: 'execute', recordKey, requestHash };
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
