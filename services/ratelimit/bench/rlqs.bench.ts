import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import { freePort } from '@platform/testkit/ports';
import { startRedis } from '@platform/testkit/redis';
import { median } from '@platform/testkit/stats';
import { RlqsClient, type RlqsStream } from '../test/rlqs/rlqs-client.js';
import { ensureAnchorBuilt, ensureServiceBuilt, PROTO_DIR, SERVICE, serviceNodeArgs } from './compiled.js';
import { stopProcess } from './h2load.js';

/**
 * RLQS (StreamRateLimitQuotas) against the bare grpc-js anchor answering every report at once with
 * ALLOW_ALL (bench/anchor-server.ts), in the same run, alternating (not a test):
 *   cd services/ratelimit && npx tsx bench/rlqs.bench.ts
 * 1. STREAMS (1,000) streams reporting BUCKETS (10) buckets each every 5 s, as Envoy does, spread
 *    over the 5 s, over CHANNELS (20) connections; each bucket's counter shared by SHARED (5)
 *    streams; report-to-answer latency over MEASURE_S (30 s) after one warm-up round, on Redis.
 *    Target: p99 <= 20 ms.
 * 2. One report of 10,000 new buckets on a new stream: time to its answer. Target: <= 100 ms.
 * The client is built from Envoy's protos (test/rlqs/rlqs-client.ts); it runs in this process.
 */
const STREAMS = Number(process.env.BENCH_RLQS_STREAMS ?? 1000);
const BUCKETS = Number(process.env.BENCH_RLQS_BUCKETS ?? 10);
const CHANNELS = Number(process.env.BENCH_RLQS_CHANNELS ?? 20);
const SHARED = Number(process.env.BENCH_RLQS_SHARED ?? 5);
const MEASURE_S = Number(process.env.BENCH_RLQS_MEASURE_S ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BIG = Number(process.env.BENCH_RLQS_BIG ?? 10_000);
const INTERVAL_MS = 5000;

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
  answered: number;
  p50: number;
  p99: number;
  max: number;
  cpuMsPerS: number;
}

/** Scenario 1 against `port`; `proc` for its CPU time. */
async function steady(port: number, proc: ChildProcess, tag: string): Promise<SteadyResult> {
  const clients = Array.from(
    { length: CHANNELS },
    () => new RlqsClient(`127.0.0.1:${port}`, { 'grpc.use_local_subchannel_pool': 1 }),
  );
  const streams: RlqsStream[] = [];
  const sent: number[][] = [];
  const timers: NodeJS.Timeout[] = [];
  let measuring = false;
  let measuredFrom = 0;
  const firstMeasured: number[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const s = clients[i % CHANNELS]!.stream('bench');
    streams.push(s);
    sent.push([]);
    const buckets = Array.from({ length: BUCKETS }, (_, j) => ({
      name: `${tag}-${Math.floor((i * BUCKETS + j) / SHARED) % Math.ceil((STREAMS * BUCKETS) / SHARED)}-${j}`,
      stream: `${i % SHARED}`,
    }));
    const report = (): void => {
      if (measuring && firstMeasured[i] === undefined) firstMeasured[i] = sent[i]!.length;
      sent[i]!.push(performance.now());
      s.report(
        buckets.map((bucket) => ({ bucket, allowed: Math.floor(Math.random() * 5), elapsedSeconds: 5 })),
      );
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
  await sleep(MEASURE_S * 1000);
  const cpuMsPerS = (cpuMicros(pids) - cpu0) / 1000 / MEASURE_S;
  measuring = false;
  for (const t of timers) clearInterval(t);
  await sleep(1000); // the last answers
  const latencies: number[] = [];
  let reports = 0;
  let answered = 0;
  for (let i = 0; i < STREAMS; i++) {
    const from = firstMeasured[i] ?? sent[i]!.length;
    // Steady state: one answer per report, in order (no pushes once every bucket has joined).
    for (let k = from; k < sent[i]!.length; k++) {
      if (sent[i]![k]! < measuredFrom) continue;
      reports++;
      const at = streams[i]!.arrivals[k];
      if (at === undefined) continue;
      answered++;
      latencies.push(at - sent[i]![k]!);
    }
  }
  for (const s of streams) s.cancel();
  for (const c of clients) c.close();
  latencies.sort((a, b) => a - b);
  return {
    reports,
    answered,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
    cpuMsPerS,
  };
}

/**
 * Scenario 2: a new stream's first report of BIG new buckets; ms to its answer (and a second one
 * on it), and the CPU time the server process spent on the first (the load-independent figure).
 */
async function big(
  port: number,
  proc: ChildProcess,
  tag: string,
): Promise<{ first: number; again: number; cpuMs: number }> {
  const client = new RlqsClient(`127.0.0.1:${port}`, {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': 64 << 20,
  });
  const s = client.stream('bench');
  const usages = Array.from({ length: BIG }, (_, j) => ({ bucket: { name: `${tag}-${j}` }, allowed: 1 }));
  await s.exchange([{ bucket: { name: `${tag}-warm` }, allowed: 1 }]);
  const pids = processTree(proc.pid!);
  const cpu0 = cpuMicros(pids);
  const t0 = performance.now();
  const r = await s.exchange(usages);
  const first = performance.now() - t0;
  const cpuMs = (cpuMicros(pids) - cpu0) / 1000;
  if (r.bucket_action.length !== BIG) throw new Error(`answered ${r.bucket_action.length} of ${BIG} buckets`);
  const t1 = performance.now();
  await s.exchange(usages);
  const again = performance.now() - t1;
  await s.close();
  client.close();
  return { first, again, cpuMs };
}

function start(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: SERVICE,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitServing(port: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const client = new RlqsClient(`127.0.0.1:${port}`);
    const s = client.stream('bench');
    const ok = await s.exchange([{ bucket: { name: 'probe' } }]).then(
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

async function main(): Promise<void> {
  console.log(`machine load average at the start: ${loadavg()} (${cpus().length} cores)`);
  await ensureServiceBuilt();
  const anchorEntry = ensureAnchorBuilt();
  const redis = await startRedis({ fresh: true });
  const anchorPort = await freePort();
  const servicePort = await freePort();
  const anchor = start([anchorEntry, String(anchorPort), PROTO_DIR, RLQS_PROTO_DIR], {});
  const service = start(serviceNodeArgs(), {
    RUNTIME_ROOT: work,
    PORT: String(await freePort()),
    GRPC_PORT: String(servicePort),
    GRPC_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    DEBUG_PORT: '0',
    REDIS_URL: '',
    KVSTORE_URL: `${redis.host}:${redis.port}`,
  });
  try {
    await waitServing(anchorPort);
    await waitServing(servicePort);
    const results: Record<'anchor' | 'service', SteadyResult[]> = { anchor: [], service: [] };
    const bigs: Record<'anchor' | 'service', { first: number; again: number; cpuMs: number }[]> = {
      anchor: [],
      service: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, port, proc] of [
        ['anchor', anchorPort, anchor],
        ['service', servicePort, service],
      ] as const) {
        results[name].push(await steady(port, proc, `r${round}${name}`));
        for (let k = 0; k < 3; k++) bigs[name].push(await big(port, proc, `big${round}${k}${name}`));
      }
    }
    console.log(
      `\n1. ${STREAMS} streams x ${BUCKETS} buckets every 5 s (${CHANNELS} connections, counters shared by ${SHARED} streams), ${ROUNDS} alternating rounds of ${MEASURE_S} s, Redis single:`,
    );
    for (const name of ['anchor', 'service'] as const) {
      for (const r of results[name]) {
        console.log(
          `  ${name.padEnd(8)} reports ${r.reports}, answered ${r.answered}; report-to-answer p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms; CPU ${r.cpuMsPerS.toFixed(0)} ms/s`,
        );
      }
    }
    const p99 = (name: 'anchor' | 'service') => median(results[name].map((r) => r.p99));
    console.log(
      `  median p99: service ${p99('service').toFixed(2)} ms (target <= 20 ms), anchor ${p99('anchor').toFixed(2)} ms; anchor/service p99 ${(p99('anchor') / p99('service')).toFixed(2)}x`,
    );
    console.log(`\n2. one report of ${BIG} new buckets on a new stream, to its answer (3 per round):`);
    for (const name of ['anchor', 'service'] as const) {
      const firsts = bigs[name].map((b) => b.first);
      const agains = bigs[name].map((b) => b.again);
      console.log(
        `  ${name.padEnd(8)} first report: median ${median(firsts).toFixed(1)} ms, max ${Math.max(...firsts).toFixed(1)} ms` +
          `${name === 'service' ? ' (target <= 100 ms)' : ''}; the same report again: median ${median(agains).toFixed(1)} ms;` +
          ` server CPU for the first: median ${median(bigs[name].map((b) => b.cpuMs)).toFixed(1)} ms`,
      );
    }
    const firstOf = (name: 'anchor' | 'service') => median(bigs[name].map((b) => b.first));
    console.log(`  anchor/service (first report) ${(firstOf('anchor') / firstOf('service')).toFixed(2)}x`);
    console.log(`\nmachine load average at the end: ${loadavg()}`);
  } finally {
    await stopProcess(service);
    await stopProcess(anchor);
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
