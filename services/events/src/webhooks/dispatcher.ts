/**
 * The sender of webhook messages, one per instance. It looks for subscriptions with messages due
 * (on every local write and every `WEBHOOK_POLL_MS` for the writes of other instances), takes each
 * one's lock (one sender per subscription across instances, `locks.ts`), and sends its messages in
 * log order, one at a time: a message is sent only once every earlier one was delivered or given
 * up. Progress is committed after each batch of deliveries, so a sender killed between a delivery
 * and its commit sends that message again (at least once; receivers dedupe by `webhook-id`) and
 * never loses one. A failed attempt holds the subscription back until its retry time (backoff with
 * jitter, `retry-after` honoured); 410 Gone, or the schedule used up, disables the subscription.
 */
import type { FastifyBaseLogger } from 'fastify';
import { readMarks } from '../changes/change-log.js';
import type { SqlQueryable } from '../storage/sql-client.js';
import type { HttpSender } from './http-sender.js';
import type { SubscriptionLocks } from './locks.js';
import { type LoggedChange, messageTypeFor, payloadOf, signatureHeader } from './messages.js';
import { parseRetryAfter, retryDelayMs } from './retry.js';
import type { WebhookSettings } from './settings.js';
import type { FinishedMessage, SendingSubscription, SubscriptionStore } from './subscription-store.js';

/** What the sender counts, for the metrics (plain fields, read at scrape time). */
export interface WebhookCounters {
  delivered: number;
  /** Attempts that got no 2xx (each retry counts). */
  failedAttempts: number;
  disabled: number;
}

export interface DispatcherOptions {
  sql: SqlQueryable;
  store: SubscriptionStore;
  locks: SubscriptionLocks;
  sender: HttpSender;
  settings: Pick<
    WebhookSettings,
    'retryScheduleSeconds' | 'pollMs' | 'concurrency' | 'historyPerSubscription'
  >;
  now: () => Date;
  /** Jitter's randomness. @default Math.random */
  random?: () => number;
  logger?: FastifyBaseLogger;
  counters?: WebhookCounters;
}

export interface Dispatcher {
  /** Look for due messages now (a local write just committed). */
  wake(): void;
  /** Stops taking work, lets messages in flight finish, and lets go of every subscription. */
  close(): Promise<void>;
}

/** Changes read per query while a subscription is sent. */
const BATCH = 200;
/** Deliveries committed together (the most a killed sender sends twice). */
const COMMIT_EVERY = 50;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, locks, sender, settings, now } = options;
  const random = options.random ?? Math.random;
  const counters: WebhookCounters = options.counters ?? { delivered: 0, failedAttempts: 0, disabled: 0 };
  const working = new Map<string, Promise<void>>();
  let closed = false;
  let scanning = false;
  let again = false;
  let wakeQueued = false;

  const headersOf = (
    sub: SendingSubscription,
    change: LoggedChange,
    body: string,
  ): Record<string, string> => {
    const timestamp = Math.floor(now().getTime() / 1000);
    const secrets =
      sub.previousSecret !== null && sub.previousSecretUntil !== null && sub.previousSecretUntil > now()
        ? [sub.secret, sub.previousSecret]
        : [sub.secret];
    return {
      'content-type': 'application/json',
      'user-agent': 'platform-events-webhooks/1',
      'webhook-id': change.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, change.messageId, timestamp, body),
    };
  };

  /** Sends one subscription's due messages while it stays due and this instance holds it. */
  const work = async (id: string): Promise<void> => {
    for (;;) {
      if (closed || !locks.holds(id)) return;
      const sub = await store.byId(id);
      if (sub === undefined || sub.status !== 'active' || sub.nextAttemptAt > now()) return;
      const { pruned } = await readMarks(options.sql);
      if (sub.cursor < pruned) {
        if (
          await store.disable(
            id,
            sub.cursor,
            pruned,
            'fell behind the change log retention (SYNC_RETENTION)',
            [],
            null,
            null,
          )
        ) {
          counters.disabled += 1;
        }
        return;
      }
      const batch = await store.changesAfter(sub.cursor, BATCH);
      if (batch.length === 0) return;
      let committed = sub.cursor;
      let reached = sub.cursor;
      let attempts = sub.attempts;
      let lastStatus: number | null = null;
      const delivered: FinishedMessage[] = [];
      const commit = async (): Promise<boolean> => {
        if (reached === committed) return true;
        if (!(await store.advance(id, committed, reached, now(), delivered, lastStatus))) return false;
        committed = reached;
        delivered.length = 0;
        return true;
      };
      for (const change of batch) {
        const type = messageTypeFor(change, sub);
        if (type === null) {
          reached = change.seq;
          continue;
        }
        if (closed || !locks.holds(id)) {
          await commit();
          return;
        }
        const body = payloadOf(change, type);
        const outcome = await sender.send({ url: sub.url, headers: headersOf(sub, change, body), body });
        options.logger?.debug({ subscription: id, webhookId: change.messageId, outcome }, 'webhook attempt');
        attempts += 1;
        if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) {
          counters.delivered += 1;
          delivered.push({
            seq: change.seq,
            messageId: change.messageId,
            type,
            status: 'delivered',
            attempts,
            lastResponseStatus: outcome.status,
            finishedAt: now(),
          });
          reached = change.seq;
          lastStatus = outcome.status;
          attempts = 0;
          if (delivered.length >= COMMIT_EVERY && !(await commit())) return;
          continue;
        }
        counters.failedAttempts += 1;
        if (!(await commit())) return;
        const status = outcome.kind === 'answered' ? outcome.status : null;
        const error = outcome.kind === 'answered' ? `HTTP ${outcome.status}` : outcome.error;
        options.logger?.info(
          { subscription: id, webhookId: change.messageId, attempts, error },
          'webhook attempt failed',
        );
        const failed: FinishedMessage = {
          seq: change.seq,
          messageId: change.messageId,
          type,
          status: 'failed',
          attempts,
          lastResponseStatus: status,
          finishedAt: now(),
        };
        const at = now();
        const delay =
          status === 410
            ? null
            : retryDelayMs(
                attempts,
                settings.retryScheduleSeconds,
                random,
                parseRetryAfter(outcome.kind === 'answered' ? outcome.retryAfter : undefined, at),
              );
        if (delay === null) {
          const reason =
            status === 410
              ? 'the receiver answered 410 Gone'
              : `no 2xx answer after ${attempts} attempts (the whole retry schedule)`;
          if (await store.disable(id, committed, change.seq, reason, [failed], status, error))
            counters.disabled += 1;
          return;
        }
        await store.retryLater(id, committed, attempts, new Date(at.getTime() + delay), status, error);
        return;
      }
      if (!(await commit())) return;
      await store.trimHistory(id, settings.historyPerSubscription);
    }
  };

  const scan = async (): Promise<void> => {
    if (closed) return;
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    try {
      const room = settings.concurrency - working.size;
      if (room <= 0) return;
      const ids = await store.due(now(), room + working.size);
      for (const id of ids) {
        if (closed || working.size >= settings.concurrency) break;
        if (working.has(id) || !(await locks.tryAcquire(id))) continue;
        const run = work(id)
          .catch((error: unknown) =>
            options.logger?.warn({ err: error, subscription: id }, 'webhook sender failed'),
          )
          .finally(async () => {
            working.delete(id);
            await locks.release(id).catch(() => undefined);
            wake();
          });
        working.set(id, run);
      }
    } catch (error) {
      options.logger?.warn({ err: error }, 'webhook sender could not look for due messages');
    } finally {
      scanning = false;
      if (again) {
        again = false;
        wake();
      }
    }
  };

  const wake = (): void => {
    if (closed || wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void scan();
    });
  };

  const timer = setInterval(() => void scan(), settings.pollMs);
  timer.unref();
  wake();

  return {
    wake,
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled([...working.values()]);
      sender.close();
      await locks.close();
    },
  };
}
