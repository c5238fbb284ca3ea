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
import { type LoggedChange, messageTypeFor, payloadOf, signingKeys, signWith } from './messages.js';
import { parseRetryAfter, retryDelayMs } from './retry.js';
import type { WebhookSettings } from './settings.js';
import type { FinishedMessage, SubscriptionStore } from './subscription-store.js';

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
/** How long a caught-up sender keeps its subscription waiting for more. */
const LINGER_MS = 2_000;
/** How long a woken sender waits for more writes of the same burst before reading. */
const GATHER_MS = 20;
/** Deliveries between two trims of a subscription's history (and one at the end of a run). */
const TRIM_EVERY = 200;
/** How long a closing sender lets messages in flight finish. */
const CLOSE_WAIT_MS = 3_000;
/** The pruned mark is read again after this long. */
const PRUNED_EVERY_MS = 10_000;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, locks, sender, settings, now } = options;
  const random = options.random ?? Math.random;
  const counters: WebhookCounters = options.counters ?? { delivered: 0, failedAttempts: 0, disabled: 0 };
  const working = new Map<string, Promise<void>>();
  let closed = false;
  let scanning = false;
  let again = false;
  let wakeQueued = false;
  // Due subscriptions the last scan left for want of a slot: caught-up senders let theirs go, and
  // backlogged ones after their next commit (at most COMMIT_EVERY deliveries later).
  let starved = false;

  // Wakes: each bumps the generation and lets lingering senders look again.
  let generation = 0;
  const lingering = new Set<(again: boolean) => void>();
  // The pruned mark of the log, read at most every PRUNED_EVERY_MS.
  let pruned = { value: 0n, readAt: Number.NEGATIVE_INFINITY };
  const prunedMark = async (): Promise<bigint> => {
    if (performance.now() - pruned.readAt > PRUNED_EVERY_MS) {
      pruned = { value: (await readMarks(options.sql)).pruned, readAt: performance.now() };
    }
    return pruned.value;
  };

  /**
   * Keeps a caught-up sender (and its lock) until the next wake, for LINGER_MS at most: a busy
   * subscription is then sent by one instance without taking and giving back its lock per
   * message. True to look again; false to let go (timed out, closing, or the slot is wanted).
   */
  const linger = (seen: number): Promise<boolean> => {
    if (closed || starved) return Promise.resolve(false);
    if (generation !== seen) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), LINGER_MS);
      const done = (again: boolean): void => {
        clearTimeout(timer);
        lingering.delete(done);
        if (!again || closed) {
          resolve(false);
          return;
        }
        // A moment for the writes of a burst to join this one: one read and one commit carry them
        // all, instead of a read and a commit per message.
        // A slot wanted meanwhile wins over the burst: the wake that brought this sender back may be
        // a poll, and polls come more often than LINGER_MS, so without this check a caught-up
        // sender would keep its slot for ever and a subscription beyond WEBHOOK_CONCURRENCY starve.
        setTimeout(() => resolve(!closed && !starved), GATHER_MS);
      };
      lingering.add(done);
    });
  };

  const headersOf = (keys: readonly Buffer[], change: LoggedChange, body: string): Record<string, string> => {
    const timestamp = Math.floor(now().getTime() / 1000);
    return {
      'content-type': 'application/json',
      'user-agent': 'platform-events-webhooks/1',
      'webhook-id': change.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWith(keys, change.messageId, timestamp, body),
    };
  };

  /** Sends one subscription's due messages while it stays due and this instance holds it. */
  const work = async (id: string): Promise<void> => {
    let sinceTrim = 0;
    try {
      for (;;) {
        if (closed || !locks.holds(id)) return;
        const seen = generation;
        const { sub, changes: batch } = await store.pendingBatch(id, BATCH);
        if (sub === undefined || sub.status !== 'active' || sub.nextAttemptAt > now()) return;
        const prunedUpTo = await prunedMark();
        if (sub.cursor < prunedUpTo) {
          const reason = 'fell behind the change log retention (SYNC_RETENTION)';
          if (await store.disable(id, sub.cursor, prunedUpTo, reason, [], null, null)) counters.disabled += 1;
          return;
        }
        if (batch.length === 0) {
          if (await linger(seen)) continue;
          return;
        }
        const keys = signingKeys(
          sub.previousSecret !== null && sub.previousSecretUntil !== null && sub.previousSecretUntil > now()
            ? [sub.secret, sub.previousSecret]
            : [sub.secret],
        );
        let committed = sub.cursor;
        let reached = sub.cursor;
        let attempts = sub.attempts;
        let lastStatus: number | null = null;
        const delivered: FinishedMessage[] = [];
        const commit = async (): Promise<boolean> => {
          if (reached === committed) return true;
          if (!(await store.advance(id, committed, reached, now(), delivered, lastStatus))) return false;
          sinceTrim += delivered.length;
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
          const outcome = await sender.send({ url: sub.url, headers: headersOf(keys, change, body), body });
          options.logger?.debug(
            { subscription: id, webhookId: change.messageId, outcome },
            'webhook attempt',
          );
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
            if (delivered.length >= COMMIT_EVERY) {
              if (!(await commit())) return;
              // A subscription waits for a slot: a backlogged sender lets go after each commit, and
              // the commit just moved this one's next_attempt_at to now, behind the waiting one in
              // the scan's oldest-due-first order. Without this a long backlog kept its slot until
              // caught up, however long the others waited.
              if (starved) return;
            }
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
            if (await store.disable(id, committed, change.seq, reason, [failed], status, error)) {
              counters.disabled += 1;
            }
            return;
          }
          await store.retryLater(id, committed, attempts, new Date(at.getTime() + delay), status, error);
          return;
        }
        if (!(await commit())) return;
        if (sinceTrim >= TRIM_EVERY) {
          await store.trimHistory(id, settings.historyPerSubscription);
          sinceTrim = 0;
        }
        if (starved) return;
        // A short batch: caught up with the log as it was read. Wait for more while holding on.
        if (batch.length < BATCH && !(await linger(seen))) return;
      }
    } finally {
      if (sinceTrim > 0) await store.trimHistory(id, settings.historyPerSubscription).catch(() => undefined);
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
      const ids = await store.due(now(), settings.concurrency * 2);
      // A subscription due that no sender has, and no slot for it: lingering senders give theirs
      // up (those in their GATHER_MS pause too, see `linger`).
      starved = false;
      for (const id of ids) {
        if (closed) break;
        if (working.has(id)) continue;
        if (working.size >= settings.concurrency) {
          // No room here. Only a subscription no other instance is sending is worth a slot (else
          // two instances full of lingering senders would make each other's give theirs up at every
          // scan): its lock, tried once per scan, says so. Let go at once; the next scan takes it.
          if (await locks.tryAcquire(id)) {
            await locks.release(id);
            starved = true;
          }
          break;
        }
        if (!(await locks.tryAcquire(id))) continue;
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
      if (starved) for (const done of [...lingering]) done(false);
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
    generation += 1;
    for (const done of [...lingering]) done(true);
    if (closed || wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void scan();
    });
  };

  // Polls also wake lingering senders: other instances' writes are seen within a poll.
  const timer = setInterval(wake, settings.pollMs);
  timer.unref();
  wake();

  return {
    wake,
    async close() {
      closed = true;
      clearInterval(timer);
      for (const done of [...lingering]) done(false);
      // Messages in flight may finish and commit, for a while: one that does not is sent again by
      // the next sender (at least once), so a shutdown never waits a whole timeout for a receiver.
      await Promise.race([
        Promise.allSettled([...working.values()]),
        new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref()),
      ]);
      sender.close();
      await locks.close();
    },
  };
}
