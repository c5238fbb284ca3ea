/**
 * One order-entry app in a process of its own, for bench/metrics-cost.ts: a fresh bench database
 * with funded keys, the app built with or without a metrics registry, listening on a free port.
 * Started with `fork` and a `ServerJob` message; answers with a `ServerReady` message and closes
 * (app, then database) on the message `close`.
 */
import { listenOnFreePort } from '@platform/testkit/app';
import { Registry } from 'prom-client';
import { buildApp } from '../../src/app.js';
import { openBenchDatabase } from './database.js';
import { type BenchKey, fundedKeys } from './keys.js';

export interface ServerJob {
  readonly metrics: boolean;
  readonly clients: number;
  readonly poolSize: number;
  readonly depth: number;
  readonly asyncCommit: boolean;
}

export interface ServerReady {
  readonly url: string;
  readonly keys: readonly BenchKey[];
}

const job = await new Promise<ServerJob>((resolve) => process.once('message', resolve));
const bench = await openBenchDatabase(`exchange_bench_metrics_${job.metrics ? 'on' : 'off'}`, job.poolSize, {
  asyncCommit: job.asyncCommit,
});
const keys = await fundedKeys(bench.db, bench.secretBox, job.clients, 'bench');
const app = await buildApp({
  db: bench.db,
  reference: bench.reference,
  secretBox: bench.secretBox,
  orderPipelineDepth: job.depth,
  ...(job.metrics ? { metrics: new Registry() } : {}),
});
const listening = await listenOnFreePort(app);
process.once('message', async () => {
  await listening.close();
  await bench.close();
  process.exit(0);
});
process.send?.({ url: listening.url, keys } satisfies ServerReady);
