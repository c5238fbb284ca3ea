import type { Logger } from 'pino';
import { backoffMs } from '../cache/policy.js';
import type { QueueOutcome } from '../queue/outcomes.js';
import type { QueuedMutation } from '../queue/store.js';
import {
  type GraphQLResponseBody,
  hasErrors,
  type UpstreamClient,
  type UpstreamMonitor,
} from '../upstream/client.js';

/**
 * The replay of a mutation queue, whatever holds it (the instance's files, or the fleet's Redis under a
 * lease): `replayQueue` takes the head, one at a time in order, through a `ReplaySource`, and
 * `replayStep` decides what became of it. Both replayers run this one loop over their own source.
 *
 * No mutation reaches the upstream twice. Each source records, before a send, that the mutation may
 * have reached the upstream (the file store in the mutation's record, Redis in its `sending` hash), and
 * so does an attempt that ended without an answer (timeout, reset). A mutation in that doubt is not
 * sent again blindly: the upstream is first asked what became of its idempotency key
 * (`idempotencyKey(key)`, which the blog serves for the keys it received, with the same credentials;
 * services/blog-graphql README "Idempotency"). Applied: its stored answer is taken as the mutation's
 * answer, and nothing is sent. Not applied: sent, with the same key. The question waits at the blog
 * for a request with that key still executing, so a send that reached it before the question is seen.
 */

/** Why a replay stopped before emptying the queue. */
export interface ReplayResult {
  flushed: number;
  remaining: number;
  /** `leased`: another instance of the fleet holds the replay lease (QUEUE_STORE=redis). */
  stoppedBy?: {
    id: string;
    reason: 'rejected' | 'unavailable' | 'backoff' | 'leased';
    message?: string | undefined;
  };
}

/** What became of a queued mutation's turn: the state to record. */
export type ReplayVerdict =
  /** Applied upstream (sent now, or found applied under its idempotency key): leaves the queue. */
  | { readonly kind: 'sent'; readonly outcome: QueueOutcome; readonly data: unknown }
  /** No answer (the upstream is unavailable): `item` is its next state, with its backoff. */
  | { readonly kind: 'retry'; readonly item: QueuedMutation; readonly reason: string }
  /** The upstream answered with errors: `item` is its rejected state; the replay stops at it. */
  | { readonly kind: 'rejected'; readonly item: QueuedMutation; readonly message: string };

/** The next turn a source gives: a mutation to send, another look, or the end of this replay. */
export type ReplayTurn<Ticket> =
  | {
      readonly kind: 'send';
      readonly item: QueuedMutation;
      /** It may have reached the upstream already: ask before sending. */
      readonly inDoubt: boolean;
      /** What the source needs to record the verdict (Redis: the step's stream id and text). */
      readonly ticket: Ticket;
    }
  | { readonly kind: 'again' }
  | { readonly kind: 'stop'; readonly stoppedBy?: ReplayResult['stoppedBy'] };

/** A queue as the replay sees it. */
export interface ReplaySource<Ticket> {
  head(): Promise<QueuedMutation | undefined>;
  size(): Promise<number>;
  /** The head to send now (recorded as possibly sent), or why not. */
  next(force: boolean, now: number): Promise<ReplayTurn<Ticket>>;
  /** Records a verdict; false when the replay must stop (the lease was lost, an operator moved it). */
  settle(ticket: Ticket, item: QueuedMutation, verdict: ReplayVerdict): Promise<boolean>;
}

export interface ReplayStepDeps {
  readonly upstream: UpstreamClient;
  readonly monitor: UpstreamMonitor;
  readonly authToken: string | undefined;
  readonly clock: () => number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly logger: Logger;
}

export interface ReplayQueueDeps extends ReplayStepDeps {
  /** For each applied mutation (cache invalidation), awaited before it leaves the queue. */
  readonly onConfirmed: (item: QueuedMutation, data: unknown) => unknown;
}

/**
 * The question asked of the upstream for a mutation in doubt (not a mutation: no key of its own). It
 * names the mutation held under the key (its query, variables as JSON text, operation name): the
 * blog answers a record of another request under that key with `IDEMPOTENCY_KEY_REUSED`, never with
 * that request's answer (issue 41).
 */
export const KEY_LOOKUP_QUERY =
  'query ProxyIdempotencyKey($key: String!, $query: String!, $variables: String, $operationName: String) { idempotencyKey(key: $key, query: $query, variables: $variables, operationName: $operationName) { state response arrivals } }';

interface KeyRecord {
  readonly state: 'APPLIED' | 'ANSWER_LOST' | 'NOT_APPLIED';
  readonly response: string | null;
}

/**
 * What the upstream knows of a key: a record, `unavailable`, `reused` (the key holds another
 * request: the upstream's answer is kept as the rejection), or `unsupported` (it has no such query).
 */
type KeyLookup =
  | { readonly kind: 'record'; readonly record: KeyRecord }
  | { readonly kind: 'unavailable'; readonly reason: string }
  | { readonly kind: 'reused'; readonly status: number; readonly body: GraphQLResponseBody }
  | { readonly kind: 'unsupported'; readonly message: string };

function authorizationOf(item: QueuedMutation, authToken: string | undefined): string | undefined {
  return item.authorization ?? (authToken ? `Bearer ${authToken}` : undefined);
}

async function lookUpKey(deps: ReplayStepDeps, item: QueuedMutation): Promise<KeyLookup> {
  const outcome = await deps.upstream.post({
    body: JSON.stringify({
      query: KEY_LOOKUP_QUERY,
      variables: {
        key: item.idempotencyKey,
        query: item.payload.query,
        variables: item.payload.variables == null ? null : JSON.stringify(item.payload.variables),
        operationName: item.payload.operationName ?? null,
      },
      operationName: 'ProxyIdempotencyKey',
    }),
    authorization: authorizationOf(item, deps.authToken),
  });
  deps.monitor.record(outcome);
  if (outcome.kind === 'unavailable') return outcome;
  const record = (outcome.body.data as { idempotencyKey?: KeyRecord | null } | null | undefined)
    ?.idempotencyKey;
  if (isStoreUnavailable(outcome.body)) {
    return { kind: 'unavailable', reason: outcome.body.errors?.[0]?.message ?? 'STORE_UNAVAILABLE' };
  }
  if (outcome.body.errors?.[0]?.extensions?.code === 'IDEMPOTENCY_KEY_REUSED') {
    return { kind: 'reused', status: outcome.status, body: outcome.body };
  }
  if (outcome.status !== 200 || hasErrors(outcome.body) || !record) {
    return {
      kind: 'unsupported',
      message: outcome.body.errors?.[0]?.message ?? `upstream answered HTTP ${outcome.status}`,
    };
  }
  return { kind: 'record', record };
}

/**
 * The blog's "nothing was kept, try later" (its disk full or failing; services/blog-graphql README):
 * a transient state, retried with backoff like an unreachable upstream, not kept as a rejection. Only
 * when nothing of the request was applied (no data): a document whose first mutation was applied
 * before the store failed has its answer stored under its key, and is settled as that answer.
 */
function isStoreUnavailable(body: GraphQLResponseBody): boolean {
  if (body.errors?.[0]?.extensions?.code !== 'STORE_UNAVAILABLE') return false;
  const data = body.data as Record<string, unknown> | null | undefined;
  return data == null || Object.values(data).every((value) => value === null);
}

function answerOf(text: string): GraphQLResponseBody | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as GraphQLResponseBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The verdict on an answer of the upstream (sent now, or recovered under the key). */
function verdictOf(
  deps: ReplayStepDeps,
  item: QueuedMutation,
  status: number,
  body: GraphQLResponseBody,
  recovered: boolean,
): ReplayVerdict {
  const at = new Date(deps.clock()).toISOString();
  if (hasErrors(body) || status >= 400) {
    const first = body.errors?.[0];
    const message = first?.message ?? `upstream answered HTTP ${status}`;
    return {
      kind: 'rejected',
      message,
      item: {
        ...item,
        attempts: item.attempts + 1,
        status: 'rejected',
        lastError: {
          message,
          code: first?.extensions?.code,
          upstreamStatus: status,
          errors: body.errors,
          at,
        },
      },
    };
  }
  return {
    kind: 'sent',
    data: body.data,
    outcome: {
      id: item.id,
      status: 'sent',
      at,
      createdAt: item.createdAt,
      attempts: item.attempts + 1,
      upstreamStatus: status,
      response: body,
      ...(recovered ? { recovered: true } : {}),
    },
  };
}

function retry(deps: ReplayStepDeps, item: QueuedMutation, reason: string): ReplayVerdict {
  const now = deps.clock();
  return {
    kind: 'retry',
    reason,
    item: {
      ...item,
      attempts: item.attempts + 1,
      lastError: { message: reason, at: new Date(now).toISOString() },
      nextAttemptAt: now + backoffMs(item.attempts + 1, deps.retryBaseMs, deps.retryMaxMs),
      // Without an answer it may have reached the upstream: the next turn asks before sending.
      maybeSent: true,
    },
  };
}

/** One queued mutation's turn: asks about its key when in doubt, else (or then) sends it. */
export async function replayStep(
  deps: ReplayStepDeps,
  item: QueuedMutation,
  inDoubt: boolean,
): Promise<ReplayVerdict> {
  if (inDoubt) {
    const known = await lookUpKey(deps, item);
    if (known.kind === 'unavailable') return retry(deps, item, known.reason);
    // Another request holds the key upstream: what sending it again would answer (422), not sent.
    if (known.kind === 'reused') return verdictOf(deps, item, known.status, known.body, false);
    if (known.kind === 'unsupported') {
      // An upstream without the question (not the blog): sent again with the same key, which it
      // may see twice (and, honouring the key, apply once).
      deps.logger.warn(
        { queueId: item.id, error: known.message },
        'the upstream cannot say whether a mutation in doubt arrived; sending it again with its key',
      );
    } else if (known.record.state === 'APPLIED') {
      const body = answerOf(known.record.response ?? '');
      if (body) {
        deps.logger.info({ queueId: item.id }, 'queued mutation found applied upstream; not sent again');
        return verdictOf(deps, item, 200, body, true);
      }
    } else if (known.record.state === 'ANSWER_LOST') {
      // Applied, its answer lost in a crash of the upstream: what sending it again would have answered.
      const message = 'The upstream applied this mutation but lost its answer; it is not sent again';
      return verdictOf(
        deps,
        item,
        409,
        { errors: [{ message, extensions: { code: 'IDEMPOTENT_ANSWER_LOST' } }] },
        true,
      );
    }
  }
  const outcome = await deps.upstream.post({
    body: JSON.stringify(item.payload),
    authorization: authorizationOf(item, deps.authToken),
    idempotencyKey: item.idempotencyKey,
  });
  deps.monitor.record(outcome);
  if (outcome.kind === 'unavailable') return retry(deps, item, outcome.reason);
  if (isStoreUnavailable(outcome.body)) {
    return retry(deps, item, outcome.body.errors?.[0]?.message ?? 'STORE_UNAVAILABLE');
  }
  return verdictOf(deps, item, outcome.status, outcome.body, false);
}

/**
 * Replays the queue in order, one mutation at a time. Stops at the first mutation the upstream cannot
 * take (retried later with backoff) or rejects (kept with its error until retried or discarded), at a
 * head in backoff unless `force`, while the breaker is open unless `force`, and when `lost()` says the
 * replay is no longer this instance's.
 */
export async function replayQueue<Ticket>(
  deps: ReplayQueueDeps,
  source: ReplaySource<Ticket>,
  force: boolean,
  lost: () => boolean = () => false,
): Promise<ReplayResult> {
  const { monitor, clock, logger } = deps;
  let flushed = 0;
  const stop = async (stoppedBy?: ReplayResult['stoppedBy']): Promise<ReplayResult> => ({
    flushed,
    remaining: await source.size(),
    ...(stoppedBy ? { stoppedBy } : {}),
  });
  while (!lost()) {
    if (!force && !monitor.allows()) {
      const head = await source.head();
      if (!head) break;
      if (head.status === 'rejected') {
        return stop({ id: head.id, reason: 'rejected', message: head.lastError?.message });
      }
      if (head.nextAttemptAt > clock()) return stop({ id: head.id, reason: 'backoff' });
      return stop({ id: head.id, reason: 'unavailable', message: 'circuit breaker open' });
    }
    const turn = await source.next(force, clock());
    if (turn.kind === 'again') continue;
    if (turn.kind === 'stop') return stop(turn.stoppedBy);
    const { item } = turn;
    const verdict = await replayStep(deps, item, turn.inDoubt);
    // Invalidate before the mutation leaves the queue: a client that sees the queue empty (GET
    // /queue) and then reads gets an answer fetched after the invalidation, not one stored as raced
    // with it. (Were the removal to fail, the replay again would only invalidate again.)
    if (verdict.kind === 'sent') await deps.onConfirmed(item, verdict.data);
    const recorded = await source.settle(turn.ticket, item, verdict);
    if (verdict.kind === 'retry') {
      logger.info(
        { queueId: item.id, retryAt: new Date(verdict.item.nextAttemptAt).toISOString() },
        'upstream unavailable during replay',
      );
      return stop({ id: item.id, reason: 'unavailable', message: verdict.reason });
    }
    if (verdict.kind === 'rejected') {
      logger.warn(
        { queueId: item.id, error: verdict.message },
        'upstream rejected a queued mutation; replay stopped',
      );
      return stop({ id: item.id, reason: 'rejected', message: verdict.message });
    }
    if (!recorded) break;
    flushed += 1;
  }
  return stop();
}
