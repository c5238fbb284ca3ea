import { createHash } from 'node:crypto';
import type { Database, Sql } from '@platform/sql-storage/database';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { App } from '../http/typed.js';
import { canonicalJson, isValidKey } from './decide.js';
import {
  claimKey,
  completeKey,
  type KeyClaim,
  peekKey,
  releaseKey,
  type StoredAnswer,
  takeWithAnswer,
} from './store.js';

/**
 * The POST routes that honour `Idempotency-Key`, and how each proves the merchant the key belongs to.
 * A key is the merchant's: only a request that proves the merchant may take it or read what it holds,
 * or anyone who knows the merchant's public key could take (or probe) the merchant's keys.
 * - `signature`: the merchant API's signature, verified before this hook runs (`request.merchant`).
 * - `route`: the route proves the merchant itself (an invoice's form signature, checked in the create
 *   path) and then takes the key in its own transaction (`keyInTransaction`); until it has proven the
 *   merchant the key is neither taken nor read, and nothing is stored under it.
 */
const ROUTES: Readonly<Record<string, { readonly provenBy: 'signature' | 'route' }>> = {
  '/public-api/payment-invoices': { provenBy: 'route' },
  '/merchant-api/payouts': { provenBy: 'signature' },
  '/merchant-api/refunds': { provenBy: 'signature' },
};

export const IDEMPOTENCY_ROUTES = Object.keys(ROUTES);

export interface IdempotencyOptions {
  readonly db: Database;
  readonly now: () => number;
  /** How long an answer is replayed. @default 24 h */
  readonly ttlMs?: number;
  /** How long a running first request holds its key before a retry may take over. @default 60 s */
  readonly lockMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request holds an Idempotency-Key and its answer is to be stored. */
    idempotencyHeld?: { merchantId: string; key: string };
    /**
     * A key the route takes in its own transaction once it has proven the merchant (`merchantId`
     * unset until then); `settled` once nothing is left to store.
     */
    idempotencyDeferred?: DeferredKey;
  }
}

/** A key of a route that proves the merchant itself: no merchant, so no claim, until it has. */
interface DeferredKey {
  readonly claim: Omit<KeyClaim, 'merchantId'>;
  merchantId: string | undefined;
  settled: boolean;
  readonly db: Sql;
}

function claimOf(deferred: DeferredKey): KeyClaim | undefined {
  return deferred.merchantId === undefined
    ? undefined
    : { ...deferred.claim, merchantId: deferred.merchantId };
}

function headerKey(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (Array.isArray(value) || !isValidKey(value)) {
    throw new ApiError('invalid_idempotency_key', 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  return value;
}

/**
 * `Idempotency-Key` on the merchant POSTs, stored in the database so every gateway instance sees
 * it: the first answer (2xx and 4xx alike) is kept 24 h and replayed (`idempotent-replayed: true`);
 * the key with other parameters, or while its first request still runs, is 409 naming the key. A 5xx,
 * a 401 or a 403 (a refused form signature: the request was never the merchant's) frees the key. Runs
 * after signature and body checks, so an unsigned or malformed request is refused as such and stores
 * nothing; a request that has not proven the merchant (ROUTES) never takes or reads a key.
 */
export function registerIdempotency(app: App, options: IdempotencyOptions): void {
  const ttlMs = options.ttlMs ?? 86_400_000;
  const lockMs = options.lockMs ?? 60_000;
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url;
    const scope = request.method === 'POST' && route ? ROUTES[route] : undefined;
    if (!scope || !route) return;
    const key = headerKey(request);
    if (key === undefined) return;
    const fingerprint = createHash('sha256').update(canonicalJson(request.body)).digest('hex');
    const claim = { key, route, fingerprint, now: new Date(options.now()), lockMs, ttlMs };
    if (scope.provenBy === 'route') {
      // Nothing here: the route proves the merchant first (`KeyInTransaction.proven`); then a free key
      // is taken with its answer in one statement at the end of the route's transaction, which then
      // commits once instead of three times (the claim, the change, the answer), and what the key
      // holds is read only when the route fails or finds the key taken (`keyInTransaction`), so a
      // first request costs no round trip for it.
      request.idempotencyDeferred = { claim, merchantId: undefined, settled: false, db: options.db };
      return;
    }
    const merchantId = request.merchant?.id;
    // Unreachable behind merchantAuth (it refuses an unproven request first); never a key without it.
    if (!merchantId) return;
    const decision = await claimKey(options.db, { ...claim, merchantId });
    if (decision.kind === 'run') {
      request.idempotencyHeld = { merchantId, key };
      return;
    }
    return answerDecision(reply, key, decision);
  });
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const deferred = request.idempotencyDeferred;
    if (deferred) {
      request.idempotencyDeferred = undefined;
      // Stored by the route's transaction, or a key found taken in it (nothing of ours to store);
      // a request that never proved the merchant stores nothing; a 5xx, 401 and 403 are not stored
      // (as below).
      const claim = claimOf(deferred);
      if (
        !claim ||
        deferred.settled ||
        reply.statusCode >= 500 ||
        reply.statusCode === 401 ||
        reply.statusCode === 403 ||
        typeof payload !== 'string'
      ) {
        return payload;
      }
      // A 4xx found before the route's transaction, or inside it (which rolled back).
      await takeWithAnswer(options.db, claim, {
        status: reply.statusCode,
        body: payload,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
      });
      return payload;
    }
    const held = request.idempotencyHeld;
    if (!held) return payload;
    request.idempotencyHeld = undefined;
    // A 5xx, and a refused signature or form signature (401/403: the caller was not who it said, or
    // its form was not signed right), free the key: the corrected retry under the same key runs.
    if (
      reply.statusCode >= 500 ||
      reply.statusCode === 401 ||
      reply.statusCode === 403 ||
      typeof payload !== 'string'
    ) {
      await releaseKey(options.db, held.merchantId, held.key);
      return payload;
    }
    const contentType = String(reply.getHeader('content-type') ?? 'application/json');
    await completeKey(options.db, held.merchantId, held.key, {
      status: reply.statusCode,
      body: payload,
      contentType,
    });
    return payload;
  });
}

/** Answers a retry from what is stored under its key: the first answer replayed, or 409. */
function answerDecision(
  reply: FastifyReply,
  key: string,
  decision: Exclude<Awaited<ReturnType<typeof claimKey>>, { kind: 'run' }>,
): FastifyReply | undefined {
  switch (decision.kind) {
    case 'replay': {
      const answer = decision.answer;
      if (!answer) return undefined;
      return reply
        .code(answer.status)
        .header('idempotent-replayed', 'true')
        .type(answer.contentType)
        .send(answer.body);
    }
    case 'reused':
      throw new ApiError(
        'idempotency_key_reused',
        `Idempotency-Key "${key}" was used with other parameters (or on another route) in the last 24 h`,
      );
    case 'in_use':
      throw new ApiError(
        'idempotency_key_in_use',
        `a request with Idempotency-Key "${key}" is still being processed; retry later`,
      );
  }
}

/** A route's key taken, with its answer, in the route's own transaction (routes proven by the `route`). */
export interface KeyInTransaction {
  /**
   * The route has proven the request is the merchant's (its form's signature is the merchant's, or
   * was before it expired): from now on the key is the merchant's to take and read. Before this,
   * `store` refuses and `answerTaken` reads nothing.
   */
  proven(merchantId: string): void;
  /**
   * Last in the transaction: takes the key with the answer the route then sends, byte for byte; throws
   * `KeyNotFree` (rolling the transaction back) when the key is held or answered already.
   */
  store(tx: Sql, answer: StoredAnswer): Promise<void>;
  /**
   * After the route failed (its own 4xx, or `KeyNotFree`): what the key holds decides first, as it
   * would have before the route ran: the first answer replayed, or 409 (thrown). Undefined when the
   * key is free: the route's own error stands (and is stored under the key on its way out).
   */
  answerTaken(reply: FastifyReply, error: unknown): Promise<FastifyReply | undefined>;
}

/** The key was held or answered when the route's transaction came to take it (the transaction rolls back). */
export class KeyNotFree extends Error {
  constructor(key: string) {
    super(`Idempotency-Key "${key}" is not free`);
    this.name = 'KeyNotFree';
  }
}

/** The request's free key, for its route to take in its transaction; undefined without one. */
export function keyInTransaction(request: FastifyRequest): KeyInTransaction | undefined {
  const deferred = request.idempotencyDeferred;
  if (!deferred) return undefined;
  const { db } = deferred;
  return {
    proven(merchantId) {
      deferred.merchantId = merchantId;
    },
    async store(tx, answer) {
      const claim = claimOf(deferred);
      if (!claim) throw new Error('an Idempotency-Key stored before the route proved the merchant');
      if (await takeWithAnswer(tx, claim, answer)) {
        deferred.settled = true;
        return;
      }
      throw new KeyNotFree(claim.key);
    },
    async answerTaken(reply, error) {
      // Not the merchant's (yet): what its keys hold is none of this request's business.
      const claim = claimOf(deferred);
      if (!claim) return undefined;
      // A failure of the gateway itself (5xx) frees the key: nothing to look up.
      if (!(error instanceof ApiError) && !(error instanceof KeyNotFree)) return undefined;
      const decision = await peekKey(db, claim);
      if (decision.kind === 'run') {
        if (!(error instanceof KeyNotFree)) return undefined;
        // Taken and freed (expired, or its holder gone) between the two statements: busy, retry.
        deferred.settled = true;
        throw new ApiError(
          'idempotency_key_in_use',
          `a request with Idempotency-Key "${claim.key}" is still being processed; retry later`,
        );
      }
      // Another request's key (nothing of ours to store).
      deferred.settled = true;
      return answerDecision(reply, claim.key, decision);
    },
  };
}
