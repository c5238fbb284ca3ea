/**
 * Tickers from memory while orders flow: `GET /v3/tickers?symbols=ALL` on the exchange against an
 * anchor, a bare Fastify route in the same process that returns the same bytes (the tickers
 * response read just before its phase) with nothing else to do. During both phases a second load
 * generator keeps submitting signed crossing orders to the exchange (bench/e2e-client.mjs), so
 * trades commit, the in-memory statistics and books follow them, and both routes share the machine
 * with the same order flow. Phases alternate (anchor, tickers) for `--rounds` rounds.
 *
 * Two ratios are printed. Wall-clock req/s (best phase of each) moves by a factor of two or more
 * from phase to phase when other work shares the machine. The CPU ratio is steadier: the server
 * process's CPU time per GET, after taking off what the orders committed during the phase cost (CPU
 * per order measured in a phase with orders alone; the least of each route's phases), anchor cost
 * over tickers cost, i.e. how many
 * tickers requests the server answers per CPU second relative to the bare route. Needs PostgreSQL
 * (DATABASE_URL or the testkit default 127.0.0.1:5432).
 *
 *   npm run bench:tickers -w services/exchange [-- --connections 16 --seconds 3 --order-keys 4 --rounds 4]
 */

import { fork } from 'node:child_process';
import { listenOnFreePort } from '@platform/testkit/app';
import Fastify from 'fastify';
import { buildApp } from '../src/app.js';
import { openBenchDatabase } from './support/database.js';
import { fundedKeys } from './support/keys.js';
import { numberOption } from './support/options.js';
import { runOrderLoad } from './support/order-load.js';

const connections = numberOption('connections', 16);
const seconds = numberOption('seconds', 3);
const orderKeys = numberOption('order-keys', 4);
const rounds = numberOption('rounds', 4);

interface GetResult {
  /** Server process CPU µs per GET, order work taken off (filled in by `measured`). */
  serverCpuPerRequest?: number;
  cpuSeconds: number;
  requests: number;
  errors: number;
  perSecond: number;
  lastBody: string;
}

const TICKERS = '/v3/tickers?symbols=ALL';

const bench = await openBenchDatabase('exchange_bench_tickers');
const { db, reference, secretBox } = bench;
try {
  const keys = await fundedKeys(db, secretBox, orderKeys, 'bench');
  const app = await buildApp({ db, reference, secretBox });
  const server = await listenOnFreePort(app);
  let anchorBytes = '';
  const bare = Fastify();
  bare.get('/v3/tickers', (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(anchorBytes);
  });
  const anchor = await listenOnFreePort(bare);

  // Orders flow for the whole measurement: the e2e generator, one connection per key.
  const totalMs = (2 + (1 + 2 * rounds) * seconds) * 1000 + 5_000;
  const orderFlow = runOrderLoad(server.url, '/v3/auth/w/order/submit', keys, totalMs);

  const phase = (url: string, ms: number): Promise<GetResult> =>
    new Promise<GetResult>((resolve, reject) => {
      const child = fork(new URL('./get-client.mjs', import.meta.url), { execArgv: [] });
      child.once('message', (message) => resolve(message as GetResult));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
      child.send({ url, path: TICKERS, connections, ms });
    });
  const ordersSoFar = async () =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n;
  const cpuNow = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  };
  let cpuPerOrder = 0;
  /** Runs a GET phase and bills the server CPU it used, less the orders' share, to its requests. */
  const measured = async (url: string, ms: number): Promise<GetResult> => {
    const orders = await ordersSoFar();
    const cpu = cpuNow();
    const result = await phase(url, ms);
    const spent = cpuNow() - cpu - ((await ordersSoFar()) - orders) * cpuPerOrder;
    return { ...result, serverCpuPerRequest: (spent * 1e6) / Math.max(1, result.requests) };
  };
  const anchorPhase = async (ms: number) => {
    anchorBytes = (await app.inject({ method: 'GET', url: TICKERS })).body;
    return measured(anchor.url, ms);
  };
  const show = (label: string, r: GetResult) =>
    console.log(
      `  ${label.padEnd(40)} ${r.perSecond.toFixed(0).padStart(7)} req/s  errors ${r.errors}  ` +
        `server CPU µs/req ${r.serverCpuPerRequest!.toFixed(0)}, client ${((r.cpuSeconds * 1e6) / Math.max(1, r.requests)).toFixed(0)}`,
    );
  console.log(
    `PostgreSQL, ${connections} connections, ${seconds} s per phase, orders from ${orderKeys} keys throughout`,
  );
  // Warm-up of both routes (JIT, connection setup).
  await anchorPhase(1_000);
  await phase(server.url, 1_000);
  {
    const orders = await ordersSoFar();
    const cpu = cpuNow();
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    const placed = (await ordersSoFar()) - orders;
    cpuPerOrder = (cpuNow() - cpu) / Math.max(1, placed);
    console.log(`  orders alone: ${placed} orders, server CPU µs/order ${(cpuPerOrder * 1e6).toFixed(0)}`);
  }
  const anchors: GetResult[] = [];
  const tickers: GetResult[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const a = await anchorPhase(seconds * 1000);
    show('anchor: bare Fastify, same bytes', a);
    anchors.push(a);
    const t = await measured(server.url, seconds * 1000);
    show('GET /v3/tickers?symbols=ALL (exchange)', t);
    tickers.push(t);
  }
  const ratio = Math.max(...tickers.map((r) => r.perSecond)) / Math.max(...anchors.map((r) => r.perSecond));
  const cpuCost = (list: GetResult[]) => Math.min(...list.map((r) => r.serverCpuPerRequest!));
  console.log(`  ratio tickers/anchor, wall req/s (best of each)  ${ratio.toFixed(2)}x  (target 0.6x)`);
  console.log(
    `  ratio tickers/anchor, req per server CPU second   ${(cpuCost(anchors) / cpuCost(tickers)).toFixed(2)}x  (target 0.6x)`,
  );
  const last = tickers[tickers.length - 1]!.lastBody;
  console.log(`  tickers body ${last.length} bytes, e.g. ${last.slice(0, 100)}`);
  const flow = await orderFlow;
  const trades = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
  console.log(
    `  order flow: ${flow.requests} orders (${flow.perSecond.toFixed(0)}/s, errors ${flow.errors}), ${trades.rows[0]!.n} trades`,
  );
  await anchor.close();
  await server.close();
} finally {
  await bench.close();
}
