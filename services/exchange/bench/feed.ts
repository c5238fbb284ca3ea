/**
 * The live feed under load, on PostgreSQL: signed v3 orders flow through HTTP (bench/e2e-client.mjs,
 * crossing orders on btcuah, one connection per API key) while `--subscribers` WebSocket clients
 * (bench/feed-subscribers.mjs, another process) follow the trades and book of btcuah. Phases
 * alternate without and with subscribers (no subscriptions / all subscribed) on the same app,
 * database and concurrency; it prints:
 *
 * - the order-entry rate without and with subscribers, and their ratio (best phase of each);
 * - the latency from a trade's commit (when the order writer publishes its batch, after the commit)
 *   to the arrival of its `trades` frame at each subscriber: p50, p99, max over every frame received.
 *
 *   npm run bench:feed -w services/exchange [-- --subscribers 1000 --concurrency 16 --seconds 4]
 */

import { fork } from 'node:child_process';
import { listenOnFreePort } from '@platform/testkit/app';
import { buildApp } from '../src/app.js';
import { defaultFeedConfig } from '../src/feed/config.js';
import { CommitFeed } from '../src/orders/commits.js';
import { openBenchDatabase } from './support/database.js';
import { fundedKeys } from './support/keys.js';
import { numberOption } from './support/options.js';
import { runOrderLoad } from './support/order-load.js';

const subscribers = numberOption('subscribers', 1000);
const concurrency = numberOption('concurrency', 16);
const seconds = numberOption('seconds', 4);
const MARKET = 'btcuah';

interface LoadResult {
  /** CPU seconds of this (the server's) process during the phase, per order, in µs. */
  serverCpuPerOrder?: number;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

interface Delivery {
  /** CPU seconds the subscribers' process used during the phase. */
  cpuSeconds: number;
  frames: number;
  unknown: number;
  bookFrames: number;
  gaps: number;
  p50: number;
  p99: number;
  max: number;
}

const now = () => performance.timeOrigin + performance.now();

const bench = await openBenchDatabase('exchange_feed_bench');
const { db, reference, secretBox } = bench;
try {
  const keys = await fundedKeys(db, secretBox, concurrency, 'feed-bench');
  // Commit time of every trade: when the writer publishes its batch (after the statement committed).
  const commits = new CommitFeed();
  let committed = new Map<number, number>();
  commits.subscribe((batch) => {
    const at = now();
    for (const trade of batch.trades) committed.set(trade.id, at);
  });
  // Every subscriber connects from 127.0.0.1: the per-address bound (FEED_MAX_CONNECTIONS_PER_ADDRESS,
  // 100 by default) would refuse all but the first hundred with 429.
  const app = await buildApp({
    db,
    reference,
    secretBox,
    commits,
    feed: { ...defaultFeedConfig(), maxConnectionsPerAddress: subscribers + 10 },
  });
  const server = await listenOnFreePort(app);
  const wsUrl = `${server.url.replace('http', 'ws')}/v3/ws`;

  const load = async (ms: number): Promise<LoadResult> => {
    const cpu = process.cpuUsage();
    const result = await generate(ms);
    const used = process.cpuUsage(cpu);
    return { ...result, serverCpuPerOrder: (used.user + used.system) / Math.max(1, result.requests) };
  };
  const generate = (ms: number): Promise<LoadResult> =>
    runOrderLoad(server.url, '/v3/auth/w/order/submit', keys, ms);

  const followers = fork(new URL('./feed-subscribers.mjs', import.meta.url), { execArgv: [] });
  const ask = <T>(message: unknown): Promise<T> =>
    new Promise<T>((resolve) => {
      followers.once('message', (answer) => resolve(answer as T));
      if (message !== undefined) followers.send(message as object);
    });
  const opened = await ask<{ ready: number }>({ url: wsUrl, count: subscribers, market: MARKET });
  console.log(
    `PostgreSQL, ${concurrency} order connections, ${opened.ready} feed connections following ${MARKET} trades + book, ${seconds} s per phase`,
  );

  const show = (label: string, r: LoadResult) =>
    console.log(
      `  ${label.padEnd(26)} ${r.perSecond.toFixed(0).padStart(6)} orders/s  p50 ${r.p50.toFixed(1).padStart(5)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  errors ${r.errors}  server CPU ${r.serverCpuPerOrder!.toFixed(0)} µs/order`,
    );
  await load(1_000);
  const without: LoadResult[] = [];
  const withSubs: LoadResult[] = [];
  const deliveries: Delivery[] = [];
  for (let round = 0; round < 2; round += 1) {
    const bare = await load(seconds * 1000);
    show('without subscribers', bare);
    without.push(bare);
    await ask({ op: 'subscribe' });
    committed = new Map();
    const followed = await load(seconds * 1000);
    show(`with ${opened.ready} subscribers`, followed);
    withSubs.push(followed);
    await ask({ op: 'unsubscribe' });
    const delivery = await ask<Delivery>({ op: 'report', commits: [...committed] });
    deliveries.push(delivery);
    console.log(
      `    trade commit -> delivery: p50 ${delivery.p50.toFixed(1)} ms  p99 ${delivery.p99.toFixed(1)} ms  max ${delivery.max.toFixed(1)} ms ` +
        `over ${delivery.frames} trades frames (${(delivery.frames / opened.ready).toFixed(0)} per subscriber), ` +
        `${delivery.bookFrames} book diffs, ${delivery.gaps} gaps, ${delivery.unknown} frames of trades committed before the phase; ` +
        `subscribers' process CPU ${delivery.cpuSeconds.toFixed(1)} s`,
    );
  }
  const best = (list: LoadResult[]) => Math.max(...list.map((r) => r.perSecond));
  const leastCpu = (list: LoadResult[]) => Math.min(...list.map((r) => r.serverCpuPerOrder!));
  console.log(
    `  ratio order entry with/without subscribers (best of each)  ${(best(withSubs) / best(without)).toFixed(2)}x`,
  );
  console.log(
    `  ratio server CPU per order without/with subscribers (least of each)  ${(leastCpu(without) / leastCpu(withSubs)).toFixed(2)}x`,
  );
  console.log(
    `  trade commit -> delivery p99 (worst phase)  ${Math.max(...deliveries.map((d) => d.p99)).toFixed(1)} ms`,
  );
  followers.send({ op: 'close' });
  await server.close();
} finally {
  await bench.close();
}
