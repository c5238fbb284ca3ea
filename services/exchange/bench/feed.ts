/**
 * The live feed under load, on PostgreSQL, one app in this process (the server) and the load in
 * child processes. Three parts, each printed as ratios against its anchor measured in the same run
 * (alternating rounds, medians of the per-round ratios; the machine's load average beside):
 *
 * - entry: order entry over the socket (bench/ws-order-client.mjs: `auth` once, then `order.submit`
 *   per order, docs/feed.md) against REST (bench/e2e-client.mjs: signed `POST /v3/auth/w/order/submit`),
 *   `--clients` closed-loop clients each, the same orders, the same durable group commit: p50 and
 *   throughput, socket / REST (target p50 <= 0.6x at 32 clients);
 * - fanout: REST order entry (`--concurrency` clients) without and with `--subscribers` WebSocket
 *   clients (bench/feed-subscribers.mjs, another process) following btcuah's book and trades: the
 *   order rate with / without (target >= 0.8x at 1,000), the server's CPU per order, and the delay
 *   from a trade's commit to its frame's arrival at the subscribers;
 * - memory: the server's heap and RSS with the subscribers connected and idle (nothing subscribed),
 *   then subscribed to book and trades of a quiet market, per connection (`--expose-gc`).
 *
 *   npm run bench:feed -w services/exchange [-- --only entry|fanout|memory --rounds 3 --seconds 4
 *     --clients 32 --concurrency 16 --subscribers 1000 --share 0.1 --max-delay 10
 *     --port 0 --database exchange_feed_bench]
 *
 * `--port`: the server's port (0: one the kernel picks), `--database`: the prefix of the fresh
 * database's name (dropped at the end), for a machine whose users keep to their own ranges and names.
 */

import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { buildApp } from '../src/app.js';
import { defaultFeedConfig } from '../src/feed/config.js';
import { CommitFeed } from '../src/orders/commits.js';
import { openBenchDatabase } from './support/database.js';
import { type BenchKey, fundedKeys } from './support/keys.js';
import { numberOption, stringOption } from './support/options.js';
import { type OrderLoadResult, runOrderLoad } from './support/order-load.js';

const only = stringOption('only', 'all');
const rounds = numberOption('rounds', 3);
const seconds = numberOption('seconds', 4);
const clients = numberOption('clients', 32);
const concurrency = numberOption('concurrency', 16);
const subscribers = numberOption('subscribers', 1000);
/** FEED_FANOUT_SHARE of the app (its default unless given). */
const share = numberOption('share', defaultFeedConfig().fanOutShare);
/** FEED_FANOUT_MAX_DELAY_MS of the app (its default unless given): the longest a frame waits for its round. */
/** Subscribers that parse their frames (latency, gaps); the others only count them (feed-subscribers.mjs). */
const sample = numberOption('sample', 100);
const maxDelay = numberOption('max-delay', defaultFeedConfig().fanOutMaxDelayMs);
const port = numberOption('port', 0);
const databasePrefix = stringOption('database', 'exchange_feed_bench');
const MARKET = 'btcuah';

interface Delivery {
  /** CPU seconds the subscribers' process used during the phase. */
  cpuSeconds: number;
  frames: number;
  unknown: number;
  bookFrames: number;
  gaps: number;
  /** Messages the connections that do not parse received. */
  counted: number;
  p50: number;
  p99: number;
  max: number;
}

/** Listens on 127.0.0.1:`port` (`--port`). */
async function listenOn(app: Awaited<ReturnType<typeof buildApp>>, port: number): Promise<RunningApp> {
  await app.listen({ port, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${port}`, port, close: async () => void (await app.close()) };
}

type Load = OrderLoadResult & { serverCpuPerOrder: number };

const now = () => performance.timeOrigin + performance.now();
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const load = () => loadavg()[0]!.toFixed(2);
const show = (label: string, r: Load) =>
  console.log(
    `    ${label.padEnd(30)} ${r.perSecond.toFixed(0).padStart(6)} orders/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  errors ${r.errors}  server CPU ${r.serverCpuPerOrder.toFixed(0)} µs/order`,
  );

const bench = await openBenchDatabase(databasePrefix);
const { db, reference, secretBox } = bench;
try {
  const restKeys = await fundedKeys(db, secretBox, Math.max(clients, concurrency), 'feed-bench-rest');
  const socketKeys = await fundedKeys(db, secretBox, clients, 'feed-bench-ws');
  // Commit time of every trade: when the writer publishes its batch (after the statement committed).
  const commits = new CommitFeed();
  let committed = new Map<number, number>();
  commits.subscribe((batch) => {
    const at = now();
    for (const trade of batch.trades) committed.set(trade.id, at);
  });
  // Every client connects from 127.0.0.1: the per-address bound (FEED_MAX_CONNECTIONS_PER_ADDRESS,
  // 100 by default) would refuse all but the first hundred with 429.
  const app = await buildApp({
    db,
    reference,
    secretBox,
    commits,
    feed: {
      ...defaultFeedConfig(),
      maxConnectionsPerAddress: subscribers + clients + 10,
      fanOutShare: share,
      fanOutMaxDelayMs: maxDelay,
    },
  });
  const server = port === 0 ? await listenOnFreePort(app) : await listenOn(app, port);
  const wsUrl = `${server.url.replace('http', 'ws')}/v3/ws`;

  /** Runs a load generator for `ms` and measures this (the server's) process's CPU meanwhile. */
  const measured = async (run: () => Promise<OrderLoadResult>): Promise<Load> => {
    const cpu = process.cpuUsage();
    const result = await run();
    const used = process.cpuUsage(cpu);
    return { ...result, serverCpuPerOrder: (used.user + used.system) / Math.max(1, result.requests) };
  };
  const rest = (keys: readonly BenchKey[], ms: number) =>
    measured(() => runOrderLoad(server.url, '/v3/auth/w/order/submit', keys, ms));
  const socket = (keys: readonly BenchKey[], ms: number) =>
    measured(
      () =>
        new Promise<OrderLoadResult>((resolve, reject) => {
          const child = fork(new URL('./ws-order-client.mjs', import.meta.url), { execArgv: [] });
          child.on('message', (message: OrderLoadResult | { prepared: true }) => {
            if ('prepared' in message) child.send('go');
            else resolve(message);
          });
          child.once('error', reject);
          child.once('exit', (code) => {
            if (code !== 0) reject(new Error(`socket load generator exited with ${code}`));
          });
          child.send({ url: wsUrl, keys, ms, perKey: Math.ceil((ms / 1000) * 2_000) });
        }),
    );

  console.log(
    `PostgreSQL, node ${process.version}, ${rounds} rounds of ${seconds} s per phase, FEED_FANOUT_SHARE ${share}, FEED_FANOUT_MAX_DELAY_MS ${maxDelay}, load average at start ${load()}`,
  );
  // Warm-up: both paths compiled and the book holds some orders.
  await rest(restKeys.slice(0, clients), 1_000);
  await socket(socketKeys, 1_000);

  if (only === 'all' || only === 'entry') {
    console.log(`entry: ${clients} closed-loop clients, REST vs socket`);
    const ratios: number[] = [];
    const rates: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const before = load();
      // Alternating which goes first, so a drift of the machine does not favour one side.
      const order = round % 2 === 0 ? (['rest', 'socket'] as const) : (['socket', 'rest'] as const);
      const results: Partial<Record<'rest' | 'socket', Load>> = {};
      for (const side of order)
        results[side] =
          side === 'rest'
            ? await rest(restKeys.slice(0, clients), seconds * 1000)
            : await socket(socketKeys, seconds * 1000);
      console.log(`  round ${round + 1} (load ${before} -> ${load()})`);
      show('REST', results.rest!);
      show('socket', results.socket!);
      ratios.push(results.socket!.p50 / results.rest!.p50);
      rates.push(results.socket!.perSecond / results.rest!.perSecond);
    }
    console.log(
      `  p50 socket / REST per round ${ratios.map((r) => r.toFixed(2)).join(' ')}: median ${median(ratios).toFixed(2)}x (target <= 0.6x)`,
    );
    console.log(
      `  throughput socket / REST per round ${rates.map((r) => r.toFixed(2)).join(' ')}: median ${median(rates).toFixed(2)}x`,
    );
  }

  if (only === 'all' || only === 'fanout' || only === 'memory') {
    const followers = fork(new URL('./feed-subscribers.mjs', import.meta.url), { execArgv: [] });
    const ask = <T>(message: unknown): Promise<T> =>
      new Promise<T>((resolve) => {
        followers.once('message', (answer) => resolve(answer as T));
        if (message !== undefined) followers.send(message as object);
      });
    const gc = (globalThis as { gc?: () => void }).gc;
    const memory = () => {
      gc?.();
      gc?.();
      const m = process.memoryUsage();
      return { heap: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
    };
    const bare = memory();
    const opened = await ask<{ ready: number }>({ url: wsUrl, count: subscribers, market: MARKET, sample });
    const idle = memory();
    await ask({ op: 'subscribe' });
    const subscribed = memory();
    await ask({ op: 'unsubscribe' });
    const perConnection = (a: { heap: number; rss: number }, b: { heap: number; rss: number }) =>
      `heap ${((b.heap - a.heap) / opened.ready / 1024).toFixed(1)} KiB, RSS ${((b.rss - a.rss) / opened.ready / 1024).toFixed(1)} KiB`;
    console.log(
      `memory per idle subscriber (${opened.ready} connections${gc ? '' : ', no --expose-gc: figures include garbage'}): connected ${perConnection(bare, idle)}; subscribed to ${MARKET} book + trades ${perConnection(bare, subscribed)}`,
    );

    if (only !== 'memory') {
      console.log(
        `fanout: ${concurrency} REST order clients, without and with ${opened.ready} subscribers to ${MARKET} trades + book`,
      );
      const ratios: number[] = [];
      const cpuRatios: number[] = [];
      for (let round = 0; round < rounds; round += 1) {
        const before = load();
        const order = round % 2 === 0 ? [false, true] : [true, false];
        const results: { without?: Load; with?: Load } = {};
        let delivery: Delivery | undefined;
        for (const followed of order) {
          if (followed) {
            await ask({ op: 'subscribe' });
            committed = new Map();
            results.with = await rest(restKeys.slice(0, concurrency), seconds * 1000);
            await ask({ op: 'unsubscribe' });
            delivery = await ask<Delivery>({ op: 'report', commits: [...committed] });
          } else {
            results.without = await rest(restKeys.slice(0, concurrency), seconds * 1000);
          }
        }
        console.log(`  round ${round + 1} (load ${before} -> ${load()})`);
        show('without subscribers', results.without!);
        show(`with ${opened.ready} subscribers`, results.with!);
        console.log(
          `      trade commit -> delivery: p50 ${delivery!.p50.toFixed(1)} ms  p99 ${delivery!.p99.toFixed(1)} ms  max ${delivery!.max.toFixed(1)} ms ` +
            `at ${Math.min(sample, opened.ready)} parsing subscribers over ${delivery!.frames} trades frames, ` +
            `${delivery!.bookFrames} book diffs, ${delivery!.gaps} gaps; ${delivery!.counted} frames at the other subscribers; their process CPU ${delivery!.cpuSeconds.toFixed(1)} s`,
        );
        ratios.push(results.with!.perSecond / results.without!.perSecond);
        cpuRatios.push(results.without!.serverCpuPerOrder / results.with!.serverCpuPerOrder);
      }
      console.log(
        `  order entry with / without subscribers per round ${ratios.map((r) => r.toFixed(2)).join(' ')}: median ${median(ratios).toFixed(2)}x (target >= 0.8x)`,
      );
      console.log(
        `  server CPU per order without / with per round ${cpuRatios.map((r) => r.toFixed(2)).join(' ')}: median ${median(cpuRatios).toFixed(2)}x`,
      );
    }
    followers.send({ op: 'close' });
  }
  console.log(`load average at the end ${load()}`);
  await server.close();
} finally {
  await bench.close();
}
