/**
 * Starts the webhook sender in a worker thread (`sender-worker.ts`) and answers it as a
 * `Dispatcher`: `wake` after each local write, `close` at shutdown, counters copied for the
 * metrics. On PostgreSQL only (PGlite is opened by this thread alone). A worker that dies is
 * started again after a second: its locks went with its connection, so nothing is sent twice at
 * once and the next sender goes on from the last committed cursor.
 */
import { Worker } from 'node:worker_threads';
import type { LogSettings } from '@platform/logging/settings';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher, WebhookCounters } from './dispatcher.js';
import type { FromSender, SenderWorkerData, ToSender } from './sender-worker.js';
import type { WebhookSettings } from './settings.js';

export interface SenderThreadOptions {
  url: string;
  settings: WebhookSettings;
  /** `WEBHOOK_SENDER_NICE`: the thread's nice value (0 = the process's priority). */
  nice: number;
  /** The worker logs with its own logger of these settings (to the same output); none without. */
  log?: LogSettings;
  logger?: FastifyBaseLogger;
  counters?: WebhookCounters;
}

const RESTART_MS = 1_000;
const CLOSE_WAIT_MS = 5_000;

/** Under tsx (sources) the worker loads tsx first; compiled, the .js file beside this one. */
function spawnWorker(data: SenderWorkerData): Worker {
  if (import.meta.url.endsWith('.ts')) {
    const entry = new URL('./sender-worker.ts', import.meta.url).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    return new Worker(
      `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`,
      { eval: true, workerData: data },
    );
  }
  return new Worker(new URL('./sender-worker.js', import.meta.url), { workerData: data });
}

export function startSenderThread(options: SenderThreadOptions): Dispatcher {
  const data: SenderWorkerData = {
    url: options.url,
    settings: options.settings,
    nice: options.nice,
    log: options.log ?? null,
  };
  let worker: Worker | undefined;
  let closing = false;
  let wakeQueued = false;
  let closed: (() => void) | undefined;

  const start = (): void => {
    const next = spawnWorker(data);
    worker = next;
    next.on('message', (message: FromSender) => {
      if (message.kind === 'counters' && options.counters) Object.assign(options.counters, message.counters);
      if (message.kind === 'closed') closed?.();
    });
    next.on('error', (error) => options.logger?.error({ err: error }, 'webhook sender thread failed'));
    next.on('exit', (code) => {
      if (worker === next) worker = undefined;
      closed?.();
      if (closing) return;
      options.logger?.error({ code }, 'webhook sender thread stopped; starting it again');
      setTimeout(() => {
        if (!closing) start();
      }, RESTART_MS).unref();
    });
  };
  start();

  const post = (message: ToSender): void => worker?.postMessage(message);
  return {
    // One message per turn of the event loop however many writes it carried.
    wake() {
      if (wakeQueued || closing) return;
      wakeQueued = true;
      setImmediate(() => {
        wakeQueued = false;
        post('wake');
      });
    },
    async close() {
      closing = true;
      const current = worker;
      if (current === undefined) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_WAIT_MS);
        closed = () => {
          clearTimeout(timer);
          resolve();
        };
        post('close');
      });
      await current.terminate();
    },
  };
}
