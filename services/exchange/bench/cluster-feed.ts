/**
 * How far the live feed of a node that follows a market lags the feed of its owner (issue 29, README
 * "Running a cluster"), with real processes (`src/server.ts` under tsx) on one throw-away PostgreSQL:
 * two nodes, btcuah pinned to node-1; one WebSocket client on each node follows the `book` and
 * `trades` channels of btcuah while `--clients` connections send crossing orders to node-1 for
 * `--seconds`. Both clients run in this process, so their clocks are one: for every book diff both
 * received (same `seq` on both nodes, the committed log's), the lag in ms is the follower client's
 * arrival time less the owner client's, and the lag in commands is how far the owner's stream had
 * gone past that `seq` when the follower's frame arrived. Also checks that the two streams are the
 * same frames (the frames of the batches both saw, compared as text).
 *
 *   npm run bench:cluster-feed -w services/exchange [-- --clients 16 --seconds 10]
 *
 * Ports: the nodes' NODE_URLs use 22311 and 22312 (`--node-port` moves them); public ports are free
 * ones chosen by the kernel.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { createTestDatabase } from '@platform/testkit/postgres';
import { WebSocket } from 'ws';
import { DEFAULT_REFERENCE_FILE, parseMasterKey } from '../src/config.js';
import { createSecretBox } from '../src/crypto/secret-box.js';
import { openStorage } from '../src/db/open.js';
import { syncCurrencies } from '../src/ledger/store.js';
import { loadReferenceData } from '../src/reference/load.js';
import { fundedKeys } from './support/keys.js';
import { numberOption } from './support/options.js';
import { runOrderLoad } from './support/order-load.js';

const clients = numberOption('clients', 16);
const seconds = numberOption('seconds', 10);
const nodePort = numberOption('node-port', 22311);

const MASTER_KEY = 'ab'.repeat(32);
const ORDER_PATH = '/v3/auth/w/order/submit';
const MARKET = 'btcuah';
const serviceDir = fileURLToPath(new URL('..', import.meta.url));

const database = await createTestDatabase('exchange_bench_cluster_feed');
const db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'bench-cluster-feed-'));
const running: ServiceProcess[] = [];

async function start(nodeId: string, nodeUrl: string): Promise<ServiceProcess> {
  const proc = await startServiceProcess({
    name: nodeId,
    entry: path.join(serviceDir, 'src/server.ts'),
    cwd,
    env: {
      DATABASE_URL: database.url,
      MASTER_KEY,
      MASTER_KEY_FILE: '',
      DATA_DIR: path.join(cwd, nodeId),
      SEED_DEMO: 'false',
      ALLOW_SANDBOX_SECRETS: 'true',
      LOG_LEVEL: 'warn',
      RATE_LIMITS_ENABLED: 'false',
      NODE_ID: nodeId,
      NODE_URL: nodeUrl,
    },
    port: 0,
    healthPath: '/health',
    timeoutMs: 180_000,
  });
  running.push(proc);
  return proc;
}

/** Every frame of one client of the feed with its arrival time (performance.now()). */
interface Received {
  readonly text: string;
  readonly frame: { event?: string; channel?: string; seq?: number };
  readonly at: number;
}

async function listen(url: string): Promise<{ frames: Received[]; close: () => void }> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/v3/ws`);
  const frames: Received[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    frames.push({ text, frame: JSON.parse(text) as Received['frame'], at: performance.now() });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ op: 'subscribe', channel: 'book', market: MARKET }));
  socket.send(JSON.stringify({ op: 'subscribe', channel: 'trades', market: MARKET }));
  return { frames, close: () => socket.close() };
}

const quantile = (list: number[], q: number) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

async function until(what: string, check: () => Promise<boolean>, boundMs = 60_000): Promise<void> {
  const end = performance.now() + boundMs;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

try {
  await syncCurrencies(db, loadReferenceData(DEFAULT_REFERENCE_FILE));
  const box = createSecretBox(parseMasterKey(MASTER_KEY, 'MASTER_KEY'));
  const keys = await fundedKeys(db, box, clients, 'cluster-feed');
  console.log(
    `exchange cluster feed lag bench: ${clients} clients, ${seconds} s of orders on the owner; load average ` +
      readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  );
  const owner = await start('node-1', `http://127.0.0.1:${nodePort}`);
  await until('node-1 to own btcuah', async () => {
    const { rows } = await db.query<{ owner: string | null }>(
      'SELECT owner FROM market_leases WHERE market = $1 AND expires_at > clock_timestamp()',
      [MARKET],
    );
    return rows[0]?.owner === 'node-1';
  });
  await db.query(`UPDATE market_leases SET pinned_to = 'node-1' WHERE market = $1`, [MARKET]);
  const follower = await start('node-2', `http://127.0.0.1:${nodePort + 1}`);
  const onOwner = await listen(owner.url);
  const onFollower = await listen(follower.url);
  await runOrderLoad(owner.url, ORDER_PATH, keys, 1_000); // warm-up
  const diffs = (frames: Received[]) => frames.filter((r) => r.frame.event === 'diff');
  const lastSeq = () => diffs(onOwner.frames).at(-1)?.frame.seq ?? 0;
  await sleep(500);
  const loadFrom = lastSeq();
  const load = await runOrderLoad(owner.url, ORDER_PATH, keys, seconds * 1000);
  // The follower catches up with the owner's last frame (bounded).
  const end = lastSeq();
  await until(
    'the follower to reach the owner',
    async () => (diffs(onFollower.frames).at(-1)?.frame.seq ?? 0) >= end,
  );
  onOwner.close();
  onFollower.close();

  const ownerDiffs = diffs(onOwner.frames).filter((r) => r.frame.seq! > loadFrom);
  const bySeq = new Map(ownerDiffs.map((r) => [r.frame.seq!, r]));
  const lagMs: number[] = [];
  const lagCommands: number[] = [];
  let owned = 0;
  for (const received of diffs(onFollower.frames)) {
    const twin = bySeq.get(received.frame.seq!);
    if (!twin) continue;
    lagMs.push(received.at - twin.at);
    // How far the owner's stream had gone when this frame reached the follower's client.
    while (owned + 1 < ownerDiffs.length && ownerDiffs[owned + 1]!.at <= received.at) owned += 1;
    lagCommands.push(Math.max(0, ownerDiffs[owned]!.frame.seq! - received.frame.seq!));
  }
  // The same frames, text for text, over the batches both clients saw.
  const from = Math.max(
    ...[onOwner.frames, onFollower.frames].map(
      (frames) => frames.find((r) => r.frame.event === 'snapshot')?.frame.seq ?? 0,
    ),
  );
  const stream = (frames: Received[]) =>
    frames
      .filter((r) => (r.frame.event === 'diff' || r.frame.event === 'trades') && r.frame.seq! > from)
      .filter((r) => r.frame.seq! <= end)
      .map((r) => r.text);
  const a = stream(onOwner.frames);
  const b = stream(onFollower.frames);
  const differing = a.filter((text, i) => b[i] !== text).length + Math.abs(a.length - b.length);
  const commandsPerSecond = (end - loadFrom) / seconds;
  console.log(
    `  load on the owner: ${load.perSecond.toFixed(0)} orders/s (p50 ${load.p50.toFixed(1)} ms, errors ${load.errors}), ` +
      `${commandsPerSecond.toFixed(0)} commands/s in btcuah's log, ${ownerDiffs.length} book diffs`,
  );
  // Negative: the follower's frame reached its client first (the owner's loop was busier).
  console.log(
    `  follower feed lag behind the owner's feed over ${lagMs.length} diffs of the load: p50 ${quantile(lagMs, 0.5).toFixed(0)} ms, ` +
      `p99 ${quantile(lagMs, 0.99).toFixed(0)} ms, max ${Math.max(...lagMs).toFixed(0)} ms; ` +
      `p50 ${quantile(lagCommands, 0.5)} commands, p99 ${quantile(lagCommands, 0.99)} commands`,
  );
  console.log(
    `  frames compared (book diffs and trades of seq ${from + 1}-${end}): ${a.length} on the owner, ${b.length} on the follower, ` +
      `${differing} differing`,
  );
} finally {
  for (const proc of running) await proc.stop().catch(() => undefined);
  await db.close();
  await database.drop();
  rmSync(cwd, { recursive: true, force: true });
}
