import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';
import { requireBinary } from '@platform/testkit/binaries';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import { freePort } from '@platform/testkit/ports';
import { type ManagedProcess, spawnManaged } from '@platform/testkit/process';
import { median } from '@platform/testkit/stats';
import { Redis } from 'ioredis';
import { ensureAnchorBuilt, ensureServiceBuilt, PROTO_DIR, SERVICE, serviceNodeArgs } from './compiled.js';
import { stopProcess } from './h2load.js';
import { countActions, encodeReport, RawClient, type RawStream } from './rlqs-raw-client.js';

/**
 * RLQS (StreamRateLimitQuotas) against the bare grpc-js anchor answering every report at once with
 * ALLOW_ALL (bench/anchor-server.ts), in the same run, alternating (not a test):
 *   cd services/ratelimit && npx tsx bench/rlqs.bench.ts
 * 1. STREAMS (1,000) streams reporting BUCKETS (10) buckets each every 5 s, as Envoy does, spread
 *    over the 5 s, over CHANNELS (20) connections; SHARED_BUCKETS (5) of each stream's buckets on
 *    counters shared by SHARED (5) streams, the others its own; report-to-answer latency over
 *    MEASURE_S (30 s) after one warm-up round, on Redis. Target: p99 <= 20 ms.
 * 2. One report of 10,000 new buckets on a new stream: time to its answer. Target: <= 100 ms.
 * Beside the latencies, the CPU time of the server process, of redis-server and of this process
 * (the client) from /proc: on a loaded 2-core machine the CPU per report is the figure that does
 * not depend on the load. The client (bench/rlqs-raw-client.ts, Envoy's protos) sends reports
 * encoded beforehand and reads only the answers' action counts, so that it is not the bottleneck;
 * Redis is reached directly (not through the testkit's front).
 */
const STREAMS = Number(process.env.BENCH_RLQS_STREAMS ?? 1000);
const BUCKETS = Number(process.env.BENCH_RLQS_BUCKETS ?? 10);
const CHANNELS = Number(process.env.BENCH_RLQS_CHANNELS ?? 20);
const SHARED = Number(process.env.BENCH_RLQS_SHARED ?? 5);
const SHARED_BUCKETS = Number(process.env.BENCH_RLQS_SHARED_BUCKETS ?? 5);
const MEASURE_S = Number(process.env.BENCH_RLQS_MEASURE_S ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BIG = Number(process.env.BENCH_RLQS_BIG ?? 10_000);
const INTERVAL_MS = 5000;
/** Node flags for the service process only (`--cpu-prof --cpu-prof-dir=...` to profile it). */
const SERVICE_FLAGS = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
/** `anchor` or `service` to run one side only (profiling); both by default. */
const ONLY = process.env.BENCH_RLQS_ONLY ?? '';
/** Which scenarios: `12` (default), `1` or `2`. */
const SCENARIOS = process.env.BENCH_RLQS_SCENARIOS ?? '12';

/**
 * `BENCH_PORT_BASE`: the bench's ports are taken from BASE upwards (a helper's own range on a shared
 * machine); the kernel's free ports otherwise.
 */
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 0);
let portsTaken = 0;
const benchPort = (): Promise<number> =>
  PORT_BASE > 0 ? Promise.resolve(PORT_BASE + portsTaken++) : freePort();

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const work = mkdtempSync(join(tmpdir(), 'rlqs-bench-'));
mkdirSync(join(work, 'config'));
writeFileSync(
  join(work, 'config', 'bench.yaml'),
  'domain: bench\ndescriptors:\n  - key: name\n    rate_limit: { unit: minute, requests_per_unit: 1000000000 }\n',
);

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

interface SteadyResult {
  reports: number;
  /** Messages that were not an answer (pushes) while measuring. */
  pushes: number;
  answered: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU of the server process, of redis-server and of this (the client's) process, ms per s. */
  cpuMsPerS: number;
  redisMsPerS: number;
  clientMsPerS: number;
}

const VARIANTS = 4;

/**
 * Scenario 1 against `port`; `proc` and `redisPids` for their CPU time. Buckets 0..SHARED_BUCKETS-1
 * of a stream are counters shared with SHARED - 1 other streams, the others its own: a push (a
 * peer joined) carries the shared ones only, so an answer is told from a push by its BUCKETS
 * actions.
 */
async function steady(
  port: number,
  proc: ChildProcess,
  redisPids: readonly number[],
  tag: string,
): Promise<SteadyResult> {
  const clients = Array.from(
    { length: CHANNELS },
    () => new RawClient(`127.0.0.1:${port}`, { 'grpc.use_local_subchannel_pool': 1 }),
  );
  const streams: RawStream[] = [];
  const sent: number[][] = [];
  const answers: number[][] = [];
  const timers: NodeJS.Timeout[] = [];
  let measuring = false;
  let measuredFrom = 0;
  let pushes = 0;
  const firstMeasured: number[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const s = clients[i % CHANNELS]!.stream();
    streams.push(s);
    sent.push([]);
    const answered: number[] = [];
    answers.push(answered);
    const buckets = Array.from({ length: BUCKETS }, (_, j) => ({
      name: j < SHARED_BUCKETS ? `${tag}-s${Math.floor(i / SHARED)}-${j}` : `${tag}-p${i}-${j}`,
      stream: `${i}`,
    }));
    // Encoded once (a few usage variants): the client's CPU goes to the gRPC stream only.
    const reports = Array.from({ length: VARIANTS }, () =>
      encodeReport(
        'bench',
        buckets.map((bucket) => ({ bucket, allowed: Math.floor(Math.random() * 5), elapsedSeconds: 5 })),
      ),
    );
    s.onResponse = (bytes, at) => {
      if (countActions(bytes) === BUCKETS) answered.push(at);
      else if (measuring) pushes++;
    };
    const report = (): void => {
      if (measuring && firstMeasured[i] === undefined) firstMeasured[i] = sent[i]!.length;
      sent[i]!.push(performance.now());
      s.send(reports[sent[i]!.length % VARIANTS]!);
    };
    // Spread over the interval, as independent Envoys are.
    timers.push(
      setTimeout(
        () => {
          report();
          timers.push(setInterval(report, INTERVAL_MS));
        },
        (i * INTERVAL_MS) / STREAMS,
      ),
    );
  }
  await sleep(INTERVAL_MS + 1000); // one warm-up round: every bucket subscribed
  measuring = true;
  measuredFrom = performance.now();
  const pids = processTree(proc.pid!);
  const cpu0 = cpuMicros(pids);
  const redis0 = cpuMicros(redisPids);
  const client0 = process.cpuUsage();
  await sleep(MEASURE_S * 1000);
  const cpuMsPerS = (cpuMicros(pids) - cpu0) / 1000 / MEASURE_S;
  const redisMsPerS = (cpuMicros(redisPids) - redis0) / 1000 / MEASURE_S;
  const client = process.cpuUsage(client0);
  const clientMsPerS = (client.user + client.system) / 1000 / MEASURE_S;
  measuring = false;
  for (const t of timers) clearInterval(t);
  await sleep(2000); // the last answers
  const latencies: number[] = [];
  let reports = 0;
  let answered = 0;
  for (let i = 0; i < STREAMS; i++) {
    const from = firstMeasured[i] ?? sent[i]!.length;
    // One answer per report, in order.
    for (let k = from; k < sent[i]!.length; k++) {
      if (sent[i]![k]! < measuredFrom) continue;
      reports++;
      const at = answers[i]![k];
      if (at === undefined) continue;
      answered++;
      latencies.push(at - sent[i]![k]!);
    }
  }
  for (const s of streams) s.cancel();
  for (const c of clients) c.close();
  // The server's close of the 1,000 streams (their leave in Redis) is not measured with what follows.
  await sleep(2000);
  latencies.sort((a, b) => a - b);
  return {
    reports,
    pushes,
    answered,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
    cpuMsPerS,
    redisMsPerS,
    clientMsPerS,
  };
}

interface BigResult {
  first: number;
  again: number;
  /** CPU of the server process and of redis-server for the first report, ms. */
  cpuMs: number;
  redisMs: number;
}

/**
 * Scenario 2: a new stream's first report of BIG new buckets; ms to its answer (and a second one
 * on it), and the CPU time the server process and Redis spent on the first (the load-independent
 * figures).
 */
async function big(
  port: number,
  proc: ChildProcess,
  redisPids: readonly number[],
  tag: string,
): Promise<BigResult> {
  const client = new RawClient(`127.0.0.1:${port}`, {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': 64 << 20,
  });
  const s = client.stream(true);
  const report = encodeReport(
    'bench',
    Array.from({ length: BIG }, (_, j) => ({ bucket: { name: `${tag}-${j}` }, allowed: 1 })),
  );
  await s.exchange(encodeReport('bench', [{ bucket: { name: `${tag}-warm` }, allowed: 1 }]));
  const pids = processTree(proc.pid!);
  const cpu0 = cpuMicros(pids);
  const redis0 = cpuMicros(redisPids);
  const t0 = performance.now();
  const r = await s.exchange(report);
  const first = performance.now() - t0;
  const cpuMs = (cpuMicros(pids) - cpu0) / 1000;
  const redisMs = (cpuMicros(redisPids) - redis0) / 1000;
  const n = countActions(r);
  if (n !== BIG) throw new Error(`answered ${n} of ${BIG} buckets`);
  const t1 = performance.now();
  await s.exchange(report);
  const again = performance.now() - t1;
  s.close();
  client.close();
  // The server's close of the 10,000 buckets (their leave in Redis) is not measured with the next one.
  await sleep(1000);
  return { first, again, cpuMs, redisMs };
}

function start(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: SERVICE,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitServing(port: number): Promise<void> {
  const probe = encodeReport('bench', [{ bucket: { name: 'probe' } }]);
  for (let i = 0; i < 300; i++) {
    const client = new RawClient(`127.0.0.1:${port}`);
    const s = client.stream();
    const ok = await s.exchange(probe, 1000).then(
      () => true,
      () => false,
    );
    s.cancel();
    client.close();
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`port ${port} never answered`);
}

/** redis-server on a port of its own, without the testkit's front (a TCP relay in this process). */
async function startBenchRedis(): Promise<{ port: number; proc: ManagedProcess; client: Redis }> {
  const port = await benchPort();
  const dir = mkdtempSync(join(tmpdir(), 'rlqs-bench-redis-'));
  const proc = spawnManaged({
    name: 'redis-server',
    command: requireBinary('redis-server', 'redis-server'),
    args: ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir],
  });
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  for (let i = 0; ; i++) {
    try {
      await client.connect();
      await client.ping();
      break;
    } catch (error) {
      if (i > 50) throw error;
      client.disconnect();
      await sleep(100);
    }
  }
  return { port, proc, client };
}

/** `INFO commandstats` as calls and usec per command. */
async function commandStats(client: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await client.info('commandstats');
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/cmdstat_(\S+):calls=(\d+),usec=(\d+)/g))
    out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

function statsDelta(
  before: Map<string, { calls: number; usec: number }>,
  after: Map<string, { calls: number; usec: number }>,
): string {
  const parts: string[] = [];
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, usec: 0 };
    if (a.calls === b.calls || name === 'info') continue;
    parts.push(`${name} ${a.calls - b.calls} calls ${((a.usec - b.usec) / 1000).toFixed(1)} ms`);
  }
  return parts.join(', ');
}

type Target = 'anchor' | 'service';

async function main(): Promise<void> {
  console.log(`machine load average at the start: ${loadavg()} (${cpus().length} cores)`);
  await ensureServiceBuilt();
  const anchorEntry = ensureAnchorBuilt();
  const redis = await startBenchRedis();
  const redisPids = processTree(redis.proc.pid!);
  const anchorPort = await benchPort();
  const servicePort = await benchPort();
  const anchor = start([anchorEntry, String(anchorPort), PROTO_DIR, RLQS_PROTO_DIR], {});
  const service = start(serviceNodeArgs(SERVICE_FLAGS), {
    RUNTIME_ROOT: work,
    PORT: String(await benchPort()),
    GRPC_PORT: String(servicePort),
    GRPC_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    DEBUG_PORT: '0',
    REDIS_URL: '',
    KVSTORE_URL: `127.0.0.1:${redis.port}`,
  });
  const targets: [Target, number, ChildProcess][] = [
    ['anchor', anchorPort, anchor],
    ['service', servicePort, service],
  ];
  const run = targets.filter(([name]) => ONLY === '' || ONLY === name);
  try {
    await waitServing(anchorPort);
    await waitServing(servicePort);
    const results: Record<Target, SteadyResult[]> = { anchor: [], service: [] };
    const bigs: Record<Target, BigResult[]> = { anchor: [], service: [] };
    const redisSteady: string[] = [];
    const redisBig: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, and the other way round every second round.
      for (const [name, port, proc] of round % 2 === 0 ? run : [...run].reverse()) {
        if (SCENARIOS.includes('1')) {
          const before = await commandStats(redis.client);
          results[name].push(await steady(port, proc, redisPids, `r${round}${name}`));
          if (name === 'service') redisSteady.push(statsDelta(before, await commandStats(redis.client)));
        }
        if (SCENARIOS.includes('2')) {
          for (let k = 0; k < 3; k++) {
            const before = await commandStats(redis.client);
            bigs[name].push(await big(port, proc, redisPids, `big${round}${k}${name}`));
            if (name === 'service') redisBig.push(statsDelta(before, await commandStats(redis.client)));
          }
        }
      }
    }
    if (SCENARIOS.includes('1')) {
      console.log(
        `\n1. ${STREAMS} streams x ${BUCKETS} buckets every 5 s (${CHANNELS} connections; buckets 0-${SHARED_BUCKETS - 1} of each stream on counters shared by ${SHARED} streams), ${ROUNDS} alternating rounds of ${MEASURE_S} s, Redis single:`,
      );
      const perS = (STREAMS * 1000) / INTERVAL_MS;
      for (const [name] of run) {
        for (const r of results[name]) {
          console.log(
            `  ${name.padEnd(8)} reports ${r.reports}, answered ${r.answered}, pushes ${r.pushes}; report-to-answer p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms;` +
              ` server CPU ${r.cpuMsPerS.toFixed(0)} ms/s (${((r.cpuMsPerS / perS) * 1000).toFixed(0)} us per report), redis-server ${r.redisMsPerS.toFixed(0)} ms/s, bench client ${r.clientMsPerS.toFixed(0)} ms/s`,
          );
        }
      }
      for (const line of redisSteady) console.log(`  service's Redis commands in a round: ${line}`);
      const p99 = (name: Target) => median(results[name].map((r) => r.p99));
      if (results.service.length > 0)
        console.log(
          `  median p99: service ${p99('service').toFixed(2)} ms (target <= 20 ms), anchor ${p99('anchor').toFixed(2)} ms`,
        );
      console.log(
        `  ${againstAnchor(
          'p99',
          results.service.map((r) => r.p99),
          results.anchor.map((r) => r.p99),
        )}`,
      );
    }
    if (SCENARIOS.includes('2')) {
      console.log(`\n2. one report of ${BIG} new buckets on a new stream, to its answer (3 per round):`);
      for (const [name] of run) {
        const firsts = bigs[name].map((b) => b.first);
        const agains = bigs[name].map((b) => b.again);
        console.log(
          `  ${name.padEnd(8)} first report: median ${median(firsts).toFixed(1)} ms, max ${Math.max(...firsts).toFixed(1)} ms` +
            `${name === 'service' ? ' (target <= 100 ms)' : ''}; the same report again: median ${median(agains).toFixed(1)} ms;` +
            ` CPU for the first: server ${median(bigs[name].map((b) => b.cpuMs)).toFixed(1)} ms, redis-server ${median(bigs[name].map((b) => b.redisMs)).toFixed(1)} ms (medians)`,
        );
      }
      console.log(
        `  ${againstAnchor(
          'first report',
          bigs.service.map((b) => b.first),
          bigs.anchor.map((b) => b.first),
        )}`,
      );
      for (const line of redisBig) console.log(`  service's Redis commands for two reports: ${line}`);
    }
    console.log(`\nmachine load average at the end: ${loadavg()}`);
  } finally {
    await stopProcess(service);
    await stopProcess(anchor);
    redis.client.disconnect();
    await redis.proc.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The service's figure both as absolute ms and against the anchor of the same run: the i-th
 * measurement of each was taken in the same round, next to each other, so the ratio of each pair
 * (and the service's ms above the anchor's) does not carry the load's swing between rounds that
 * the absolute figures do. The target is absolute (the ms); the ratio says how much of it
 * the service itself adds.
 */
function againstAnchor(what: string, service: readonly number[], anchor: readonly number[]): string {
  const pairs = Math.min(service.length, anchor.length);
  if (pairs === 0) return `${what} against the anchor: needs both (BENCH_RLQS_ONLY unset)`;
  const ratios = Array.from({ length: pairs }, (_, i) => service[i]! / anchor[i]!);
  const above = Array.from({ length: pairs }, (_, i) => service[i]! - anchor[i]!);
  return (
    `${what}, service against the anchor of the same round (${pairs} pairs): service ${median(service).toFixed(1)} ms, anchor ${median(anchor).toFixed(1)} ms (medians);` +
    ` ratio service/anchor median ${median(ratios).toFixed(2)}x (${ratios.map((r) => r.toFixed(2)).join(', ')}); service above the anchor median ${median(above).toFixed(1)} ms`
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
