/**
 * The webhook sender in a thread of its own (`sender-thread.ts` starts it): the same dispatcher on
 * its own pool and lock connection, at a lower CPU priority (`WEBHOOK_SENDER_NICE`), so ten HTTP
 * deliveries per write take the CPU the request thread leaves, not the request thread's. Messages
 * from the main thread: `wake` (a local write committed) and `close`; to it: counters and `closed`.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '@platform/logging/logger';
import type { LogSettings } from '@platform/logging/settings';
import { createPgClient } from '../storage/pg-client.js';
import { createDispatcher, type WebhookCounters } from './dispatcher.js';
import { createHttpSender } from './http-sender.js';
import { createPgLocks, LOCK_APPLICATION_NAME } from './locks.js';
import type { WebhookSettings } from './settings.js';
import { createSubscriptionStore } from './subscription-store.js';

export interface SenderWorkerData {
  url: string;
  settings: WebhookSettings;
  nice: number;
  log: LogSettings | null;
}

export type FromSender = { kind: 'counters'; counters: WebhookCounters } | { kind: 'closed' };
export type ToSender = 'wake' | 'close';

/** How often changed counters go to the main thread (the metrics read them there). */
const COUNTERS_EVERY_MS = 1_000;

const port = parentPort;
if (port === null) throw new Error('sender-worker.ts runs as a worker thread');
const data = workerData as SenderWorkerData;

// Linux: setpriority of a thread id sets that thread's nice value only (the request thread keeps its own).
if (data.nice !== 0) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), data.nice);
  } catch {
    // Not Linux (no /proc/thread-self): the sender keeps the process's priority.
  }
}

const logger =
  data.log === null
    ? undefined
    : createLogger({ service: 'events', ...data.log }).child({ thread: 'webhook-sender' });
const sql = createPgClient({
  url: data.url,
  poolMax: data.settings.concurrency + 1,
  // See app.ts: the sender's commits need no WAL flush of their own.
  synchronousCommit: false,
  applicationName: `${LOCK_APPLICATION_NAME}-pool:${process.pid}`,
  onIdleError: (error) => logger?.warn({ err: error }, 'webhook sender connection failed'),
});
const counters: WebhookCounters = { delivered: 0, failedAttempts: 0, disabled: 0 };
const dispatcher = createDispatcher({
  sql,
  store: createSubscriptionStore(sql),
  locks: createPgLocks(data.url, (error) => logger?.warn({ err: error }, 'webhook lock connection failed')),
  sender: createHttpSender({
    timeoutMs: data.settings.timeoutMs,
    allowPrivateTargets: data.settings.allowPrivateTargets,
  }),
  settings: data.settings,
  now: () => new Date(),
  ...(logger ? { logger } : {}),
  counters,
});

let sent = { ...counters };
const report = (): void => {
  if (
    sent.delivered === counters.delivered &&
    sent.failedAttempts === counters.failedAttempts &&
    sent.disabled === counters.disabled
  )
    return;
  sent = { ...counters };
  port.postMessage({ kind: 'counters', counters: sent } satisfies FromSender);
};
const timer = setInterval(report, COUNTERS_EVERY_MS);

port.on('message', (message: ToSender) => {
  if (message === 'wake') dispatcher.wake();
  else if (message === 'close') {
    clearInterval(timer);
    void dispatcher
      .close()
      .then(() => sql.close())
      .catch((error: unknown) => logger?.warn({ err: error }, 'webhook sender close failed'))
      .finally(() => {
        report();
        port.postMessage({ kind: 'closed' } satisfies FromSender);
      });
  }
});
