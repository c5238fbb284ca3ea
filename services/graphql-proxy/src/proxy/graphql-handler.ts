import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AnswerCache } from '../cache/answer-cache.js';
import { CacheKeyMemo } from '../cache/key.js';
import { freshness, parseCacheControl, storedLifetime, tagsInData } from '../cache/policy.js';
import { type CachedAnswer, etagOf } from '../cache/response-cache.js';
import { ScopeResolver } from '../cache/scope.js';
import type { GraphQLMode } from '../config.js';
import { type GraphQLErrorCode, graphqlErrorBody } from '../errors.js';
import type { AnalysedOperation, DocumentAnalyser } from '../graphql/document.js';
import type { PersistedQueries } from '../graphql/persisted.js';
import type { QueryGuard } from '../limits/query-guard.js';
import { refusalAnswer } from '../limits/refusal.js';
import type { ProxyMetrics } from '../metrics.js';
import type { QueueAccess } from '../queue/access.js';
import type { QueuedPayload } from '../queue/store.js';
import {
  CIRCUIT_OPEN,
  guardedPost,
  hasErrors,
  type UpstreamClient,
  type UpstreamMonitor,
  type UpstreamOutcome,
} from '../upstream/client.js';
import { hitSeconds, stillSays } from './hit-answer.js';
import { parseRequest } from './request.js';
import { type RecalledQuery, RequestMemo } from './request-memo.js';

/** A POST /graphql request as the transport hands it over. */
export interface ProxyRequest {
  readonly body: unknown;
  readonly authorization: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** GET serves queries only (GraphQL over HTTP); POST everything. @default 'POST' */
  readonly method?: 'GET' | 'POST';
  /** The POST body's text `body` was parsed from: a query passing every check is remembered by it. */
  readonly text?: string;
}

export interface ProxyAnswer {
  readonly headers: Record<string, string>;
  readonly body: string | Buffer;
  /** HTTP status; 200 unless said (413, 405). */
  readonly status?: number;
  /**
   * The transport's flattened header list for this answer, kept by the transport once written: a
   * fresh hit's answer is handed out again while its headers stay the same (proxy/hit-answer.ts).
   */
  head?: string[];
}

export interface GraphQLHandlerDeps {
  readonly mode: GraphQLMode;
  readonly authToken: string | undefined;
  /** Send AUTH_TOKEN with queries of callers without credentials (AUTH_TOKEN_FOR_QUERIES). */
  readonly authTokenForQueries: boolean;
  readonly cache: AnswerCache;
  readonly analyser: DocumentAnalyser;
  readonly upstream: UpstreamClient;
  readonly monitor: UpstreamMonitor;
  readonly queue: QueueAccess;
  /** QUEUE_MAX_ITEMS: a mutation that would make the queue longer is refused with QUEUE_FULL. */
  readonly queueMaxItems?: number;
  readonly clock: () => number;
  readonly cacheTtlMs: number;
  readonly staleIfErrorMs: number;
  /** CACHE_STALE_WHILE_REVALIDATE_SECONDS in ms (0: off). */
  readonly staleWhileRevalidateMs?: number;
  readonly logger: Logger;
  readonly scopes: ScopeResolver;
  readonly persisted: PersistedQueries;
  /** Depth, breadth, cost, token and JSON-depth limits (issue 28), checked before anything else. */
  readonly guard?: QueryGuard;
  readonly metrics: ProxyMetrics;
  /** CACHE_TTL_BY_TYPE in ms, by type name. */
  readonly typeTtlsMs: ReadonlyMap<string, number>;
  /** Asks the replayer to run (the queue was not empty when a mutation came in). */
  readonly triggerReplay: () => void;
  /** Called after a mutation succeeded upstream (SETMODE schedules a local sync). */
  readonly afterMutation: () => void;
  /**
   * SETMODE and GETMODE: answers a query from the local copy of the blog's data when the cache
   * cannot and the upstream is offline (`x-cache: LOCAL`); undefined when the local copy cannot.
   */
  readonly localAnswer?: (
    payload: QueuedPayload,
  ) => Promise<{ body: string; ageSeconds: number } | undefined>;
}

export const OFFLINE_CACHE_MISS_MESSAGE =
  'Upstream GraphQL is unavailable and cache miss occurred for this query.';
export const QUEUED_MESSAGE =
  'Upstream GraphQL is unavailable; the mutation was queued and will be sent when it is back.';
export const QUEUED_BEHIND_MESSAGE =
  'Earlier mutations are still waiting in the queue; this one was queued behind them and will be sent after them, in order.';

/** Why a mutation was queued instead of executed (`extensions.reason`). */
type QueueReason = 'upstream-unavailable' | 'behind-queue';

const NO_STORE = { 'cache-control': 'no-store' };

function error(code: GraphQLErrorCode, message: string, extra?: Record<string, unknown>): ProxyAnswer {
  return { headers: NO_STORE, body: graphqlErrorBody(code, message, extra) };
}

/** The upstream's answer to a query, and the lifetime it was stored with (undefined: not stored). */
interface FetchResult {
  readonly outcome: UpstreamOutcome;
  readonly ttlMs: number | undefined;
}

/** Tags a successful mutation invalidates: its types, the ids in its input and in its answer. */
export function mutationTags(operation: AnalysedOperation, variables: unknown, data: unknown): Set<string> {
  const tags = new Set(operation.typeTags);
  tagsInData(variables, tags);
  tagsInData(data, tags);
  return tags;
}

/**
 * POST /graphql: queries through the cache (fresh hit, else upstream with in-flight de-duplication,
 * else stale-if-error or OFFLINE_CACHE_MISS), mutations according to GRAPHQL_MODE.
 */
export class GraphQLHandler {
  /** Queries on their way upstream, by cache key, with the cache epoch they started in. */
  private readonly inFlight = new Map<string, { promise: Promise<FetchResult>; epoch: number }>();
  private readonly keys = new CacheKeyMemo();
  private readonly requests = new RequestMemo();

  constructor(private readonly deps: GraphQLHandlerDeps) {}

  /** A query remembered by the exact text of its POST body (see RequestMemo), for `handleRecalled`. */
  recall(text: string): RecalledQuery | undefined {
    return this.requests.recall(text);
  }

  /**
   * A remembered query answered from a fresh entry in memory, without a promise or an await (the
   * hottest path: a repeated query that is a hit); undefined when the full query path must run.
   */
  hitNow(recalled: RecalledQuery, authorization: string | undefined): ProxyAnswer | undefined {
    const { cache, clock, cacheTtlMs, staleIfErrorMs, metrics } = this.deps;
    const scope = this.deps.scopes.scopeOf(authorization);
    const key = this.keyFor(recalled.operation, recalled.payload, scope, recalled);
    const known = cache.peek(key);
    if (known?.body === undefined) return undefined;
    const now = clock();
    const ttlMs = known.ttlMs ?? cacheTtlMs;
    if (freshness(known, now, ttlMs, staleIfErrorMs) !== 'fresh') return undefined;
    metrics.hits += 1;
    // The same answer as the last hit of this body while every header it carries is unchanged.
    const { age, maxAge } = hitSeconds(known, ttlMs, now);
    const kept = recalled.lastHit;
    if (stillSays(kept, known, ttlMs, key, scope, age, maxAge)) return kept.answer;
    const answer = this.cachedAnswer(key, scope, known, known.body, false, now);
    recalled.lastHit = {
      entry: known,
      body: known.body,
      storedAt: known.storedAt,
      etag: known.etag,
      ttlMs,
      key,
      scope,
      age,
      maxAge,
      answer,
    };
    return answer;
  }

  /** A remembered query through the query path (cache, upstream, stale, local answers). */
  handleRecalled(recalled: RecalledQuery, authorization: string | undefined): Promise<ProxyAnswer> {
    return this.query(recalled.operation, recalled.payload, authorization, recalled);
  }

  async handle(request: ProxyRequest): Promise<ProxyAnswer> {
    const { guard } = this.deps;
    const tooDeep = guard?.checkBody(request.body);
    if (tooDeep) return refusalAnswer(tooDeep);
    const parsed = parseRequest(request.body, this.deps.persisted);
    if (!parsed.ok) return error(parsed.code, parsed.message);
    const { query, variables, operationName } = parsed;
    const refused = guard?.check(query, operationName, variables);
    if (refused) return refusalAnswer(refused);
    if (parsed.persist !== undefined) this.deps.persisted.set(parsed.persist, query);
    const analysis = this.deps.analyser.analyse(query, operationName);
    if (!analysis.ok) return error(analysis.code, analysis.message);
    const payload: QueuedPayload = { query, variables, operationName };
    if (request.text !== undefined && request.method !== 'GET') {
      this.requests.remember(request.text, request.body, analysis.operation, payload);
    }
    if (request.method === 'GET' && analysis.operation.kind !== 'query') {
      return {
        ...error('METHOD_NOT_ALLOWED', 'Only queries can be sent with GET; send mutations with POST'),
        status: 405,
      };
    }
    switch (analysis.operation.kind) {
      case 'query':
        return this.query(analysis.operation, payload, request.authorization);
      case 'mutation':
        return this.mutation(analysis.operation, payload, request);
      default:
        return error('SUBSCRIPTIONS_NOT_SUPPORTED', 'Subscriptions are not supported by this proxy');
    }
  }

  private upstreamAuthorization(clientAuthorization: string | undefined): string | undefined {
    if (clientAuthorization) return clientAuthorization;
    return this.deps.authToken ? `Bearer ${this.deps.authToken}` : undefined;
  }

  /** The cache key of a query in a scope; a remembered query keeps the key of the last scope it met. */
  private keyFor(
    operation: AnalysedOperation,
    payload: QueuedPayload,
    scope: string,
    recalled?: RecalledQuery,
  ): string {
    if (recalled !== undefined && recalled.lastScope === scope) return recalled.lastKey;
    const key = this.keys.keyOf(operation.normalised, operation.operationName, payload.variables, scope);
    if (recalled !== undefined) {
      recalled.lastScope = scope;
      recalled.lastKey = key;
    }
    return key;
  }

  private async query(
    operation: AnalysedOperation,
    payload: QueuedPayload,
    authorization: string | undefined,
    recalled?: RecalledQuery,
  ): Promise<ProxyAnswer> {
    const { cache, clock, cacheTtlMs, staleIfErrorMs, metrics } = this.deps;
    const swrMs = this.deps.staleWhileRevalidateMs ?? 0;
    const scope = this.deps.scopes.scopeOf(authorization);
    const key = this.keyFor(operation, payload, scope, recalled);
    // Fast path: a fresh entry whose body is in memory needs no await at all.
    const known = cache.peek(key);
    if (known?.body && freshness(known, clock(), known.ttlMs ?? cacheTtlMs, staleIfErrorMs) === 'fresh') {
      metrics.hits += 1;
      return this.cachedAnswer(key, scope, known, known.body, false);
    }
    // A shared (Redis) cache has no local index: what its near copy cannot answer asks it (one round trip).
    const cached = known || cache.shared ? await cache.get(key) : undefined;
    const now = clock();
    const ttl = cached?.ttlMs ?? cacheTtlMs;
    const state = cached?.body ? freshness(cached, now, ttl, staleIfErrorMs, swrMs) : 'unusable';
    if (cached?.body && state === 'fresh') {
      metrics.hits += 1;
      return this.cachedAnswer(key, scope, cached, cached.body, false);
    }
    metrics.misses += 1;
    const pending = this.upstreamFetch(key, scope, operation, payload, authorization);
    // Stale-while-revalidate: answer from the cache now; the refresh (started above, shared with
    // identical queries) stores the new answer for the next caller.
    if (cached?.body && state === 'revalidate') {
      metrics.staleServed += 1;
      return this.cachedAnswer(key, scope, cached, cached.body, true);
    }
    // With the breaker open, upstreamFetch answered CIRCUIT_OPEN without waiting.
    const { outcome, ttlMs } = await pending;
    if (outcome.kind === 'answered') {
      const headers: Record<string, string> = {
        'x-cache': 'MISS',
        'x-cache-key': key,
        'x-upstream-status': String(outcome.status),
      };
      if (ttlMs === undefined) headers['cache-control'] = 'no-store';
      else {
        headers['cache-control'] =
          `${ScopeResolver.isShared(scope) ? 'public' : 'private'}, max-age=${Math.floor(ttlMs / 1000)}`;
        headers['age'] = '0';
        // The file store's index already holds this answer (put is synchronous there); a shared
        // store's near copy may still hold an older read of the key, so its ETag is computed.
        headers['etag'] = (cache.shared ? undefined : cache.peek(key)?.etag) ?? etagOf(outcome.text);
      }
      return { headers, body: outcome.text };
    }
    if (cached?.body && freshness(cached, clock(), ttl, staleIfErrorMs) !== 'unusable') {
      metrics.staleServed += 1;
      return this.cachedAnswer(key, scope, cached, cached.body, true);
    }
    // Offline and not in the cache: the local copy of the blog's data, for anonymous callers only
    // (it cannot check a caller's credentials, and answers what anyone may read).
    if (this.deps.localAnswer && ScopeResolver.isShared(scope)) {
      const local = await this.deps.localAnswer(payload);
      if (local) {
        return {
          headers: {
            'x-cache': 'LOCAL',
            'x-cache-key': key,
            'cache-control': 'no-store',
            age: String(local.ageSeconds),
          },
          body: local.body,
        };
      }
    }
    return {
      headers: { 'x-cache': 'MISS', 'x-cache-key': key, 'cache-control': 'no-store' },
      body: graphqlErrorBody('OFFLINE_CACHE_MISS', OFFLINE_CACHE_MISS_MESSAGE, { cacheKey: key }),
    };
  }

  /**
   * A cached answer with its HTTP caching headers: `Cache-Control` (`public` for the shared anonymous
   * scope, else `private`; `max-age` = the rest of its freshness, 0 when stale), `Age`, `ETag`.
   */
  private cachedAnswer(
    key: string,
    scope: string,
    entry: CachedAnswer,
    body: Buffer,
    stale: boolean,
    now = this.deps.clock(),
  ): ProxyAnswer {
    const ageMs = Math.max(0, now - entry.storedAt);
    const ttl = entry.ttlMs ?? this.deps.cacheTtlMs;
    const maxAge = stale ? 0 : Math.max(0, Math.floor((ttl - ageMs) / 1000));
    const headers: Record<string, string> = {
      'x-cache': 'HIT',
      'x-cache-key': key,
      'cache-control': `${ScopeResolver.isShared(scope) ? 'public' : 'private'}, max-age=${maxAge}`,
      age: String(Math.floor(ageMs / 1000)),
      etag: entry.etag,
    };
    if (stale) headers['x-cache-stale'] = 'true';
    return { headers, body };
  }

  /** The upstream answer for a query, shared by identical queries in flight. */
  private upstreamFetch(
    key: string,
    scope: string,
    operation: AnalysedOperation,
    payload: QueuedPayload,
    authorization: string | undefined,
  ): Promise<FetchResult> {
    const { cache } = this.deps;
    // Join an identical query on its way upstream, unless a mutation invalidated the cache since it
    // started (its answer may predate the mutation this caller has already seen succeed).
    let pending = this.inFlight.get(key);
    if (pending === undefined || pending.epoch !== cache.epoch) {
      const epoch = cache.epoch;
      const started = {
        promise: this.fetchAndStore(key, scope, operation, payload, authorization, epoch),
        epoch,
      };
      this.inFlight.set(key, started);
      const forget = () => {
        if (this.inFlight.get(key) === started) this.inFlight.delete(key);
      };
      started.promise.then(forget, forget);
      pending = started;
    }
    return pending.promise;
  }

  private async fetchAndStore(
    key: string,
    scope: string,
    operation: AnalysedOperation,
    payload: QueuedPayload,
    authorization: string | undefined,
    epoch: number,
  ): Promise<FetchResult> {
    const outcome = await guardedPost(this.deps.upstream, this.deps.monitor, {
      body: JSON.stringify(payload),
      authorization: this.deps.authTokenForQueries
        ? this.upstreamAuthorization(authorization)
        : authorization,
    });
    if (
      outcome.kind !== 'answered' ||
      outcome.status !== 200 ||
      hasErrors(outcome.body) ||
      !outcome.body.data
    ) {
      return { outcome, ttlMs: undefined };
    }
    const tags = tagsInData(outcome.body.data, new Set(operation.typeTags));
    const ttlMs = storedLifetime(
      parseCacheControl(outcome.cacheControl),
      ScopeResolver.isShared(scope),
      tags,
      this.deps.typeTtlsMs,
      this.deps.cacheTtlMs,
    );
    if (ttlMs === undefined) return { outcome, ttlMs };
    // The index is updated at once; the file is written without holding up the answer.
    const raced = this.deps.cache.epoch !== epoch;
    const own = ttlMs === this.deps.cacheTtlMs ? undefined : ttlMs;
    void this.deps.cache.put(key, outcome.text, [...tags], this.deps.clock(), raced, own);
    return { outcome, ttlMs };
  }

  private async mutation(
    operation: AnalysedOperation,
    payload: QueuedPayload,
    request: ProxyRequest,
  ): Promise<ProxyAnswer> {
    const { mode, queue } = this.deps;
    if (mode === 'GETMODE') {
      return error('MUTATIONS_DISABLED', 'Mutations are disabled: the proxy runs in GETMODE (read-only).', {
        mode,
      });
    }
    const idempotencyKey = request.idempotencyKey || randomUUID();
    // SETMODE keeps mutations in order (README, "Queue ordering contract"): while older ones wait in
    // the queue, a new one waits behind them; while the head is a mutation the upstream rejected, no
    // later one can be sent until an operator retries or discards it, so a new one is refused at once.
    let waiting: number;
    try {
      waiting = mode === 'SETMODE' ? await queue.size() : 0;
    } catch (failure) {
      return this.queueUnavailable(failure);
    }
    if (waiting > 0) {
      const answer = await this.enqueue(payload, idempotencyKey, request.authorization, 'behind-queue');
      this.deps.triggerReplay();
      return answer;
    }
    const outcome = await guardedPost(this.deps.upstream, this.deps.monitor, {
      body: JSON.stringify(payload),
      authorization: this.upstreamAuthorization(request.authorization),
      idempotencyKey,
    });
    if (outcome.kind === 'answered') {
      if (!hasErrors(outcome.body) && outcome.status < 400) {
        const invalidated = await this.deps.cache.invalidate(
          mutationTags(operation, payload.variables, outcome.body.data),
        );
        this.deps.logger.debug(
          { invalidated, fields: operation.rootFields },
          'mutation invalidated cache entries',
        );
        this.deps.afterMutation();
      }
      return {
        headers: {
          'x-cache': 'MISS',
          'x-mutation': 'executed',
          'x-upstream-status': String(outcome.status),
          'cache-control': 'no-store',
        },
        body: outcome.text,
      };
    }
    if (mode === 'CRUDMODE') {
      this.deps.logger.warn({ reason: outcome.reason }, 'CRUDMODE mutation failed: upstream unavailable');
      return error(
        'UPSTREAM_UNAVAILABLE',
        'Upstream GraphQL is unavailable; mutations are not queued in CRUDMODE.',
        { mode },
      );
    }
    // Sent without an answer (timeout, reset after the request left): it may have been applied, so
    // the replay asks the upstream about its key before sending it (proxy/replay-step.ts).
    return this.enqueue(
      payload,
      idempotencyKey,
      request.authorization,
      'upstream-unavailable',
      outcome !== CIRCUIT_OPEN,
    );
  }

  /** The queue's store (Redis, in a fleet) cannot be reached: the mutation is neither sent nor queued. */
  private queueUnavailable(failure: unknown): ProxyAnswer {
    this.deps.logger.error({ err: failure }, 'mutation queue unavailable');
    return error(
      'QUEUE_UNAVAILABLE',
      'The mutation was not sent or queued: the mutation queue cannot be reached now (it keeps ' +
        'mutations in order across the proxies). Try again shortly.',
      { mode: this.deps.mode },
    );
  }

  private async enqueue(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    reason: QueueReason,
    maybeSent = false,
  ): Promise<ProxyAnswer> {
    const maxItems = this.deps.queueMaxItems ?? Number.POSITIVE_INFINITY;
    const mode = this.deps.mode;
    // The queue decides QUEUE_BLOCKED and QUEUE_FULL atomically with the append (one queue may serve
    // a whole fleet of proxies).
    let result: Awaited<ReturnType<QueueAccess['append']>>;
    try {
      result = await this.deps.queue.append(
        payload,
        idempotencyKey,
        authorization,
        this.deps.clock(),
        maxItems,
        maybeSent,
      );
    } catch (failure) {
      return this.queueUnavailable(failure);
    }
    if (result.kind === 'blocked') {
      const blocked = result.by;
      return error(
        'QUEUE_BLOCKED',
        `The mutation was not sent or queued: the upstream rejected queued mutation ${blocked.id} ` +
          `(${blocked.lastError?.message ?? 'rejected'}), and later mutations wait until it is retried ` +
          'or discarded (POST /queue/{id}/retry, DELETE /queue/{id}).',
        { mode, blockedBy: blocked.id, queuedMutations: result.size },
      );
    }
    if (result.kind === 'full') {
      return error(
        'QUEUE_FULL',
        `The mutation was not sent or queued: the queue holds its maximum of ${maxItems} mutations ` +
          '(QUEUE_MAX_ITEMS). Try again once the upstream is back and the queue drained.',
        { maxItems, queuedMutations: result.size },
      );
    }
    const item = result.item;
    this.deps.logger.info({ queueId: item.id }, 'mutation queued');
    return {
      headers: {
        'x-cache': 'MISS',
        'x-queued': 'true',
        'x-mutation': 'queued',
        'x-queue-id': item.id,
        'cache-control': 'no-store',
      },
      body: JSON.stringify({
        data: null,
        extensions: {
          queued: true,
          queueId: item.id,
          message: reason === 'behind-queue' ? QUEUED_BEHIND_MESSAGE : QUEUED_MESSAGE,
          reason,
        },
      }),
    };
  }
}
