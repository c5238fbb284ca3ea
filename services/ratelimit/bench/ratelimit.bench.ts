import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import { freePort } from '@platform/testkit/ports';
import { startRedis } from '@platform/testkit/redis';
import { median } from '@platform/testkit/stats';
import { Redis } from 'ioredis';
import { encodeRequest, type RateLimitRequest } from '../src/proto/messages.js';
import { ensureAnchorBuilt, ensureServiceBuilt, PROTO_DIR, SERVICE, serviceNodeArgs } from './compiled.js';

/**
 * ShouldRateLimit throughput against an anchor measured in the same run (not a test).
 *   npm run bench -w services/ratelimit            (BENCH_ROUNDS=5 BENCH_SECONDS=3 BENCH_CONNECTIONS=4 BENCH_STREAMS=32)
 * Load comes from h2load (Debian nghttp2-client) posting a pre-encoded gRPC frame, so the load
 * generator is not the bottleneck. Phases: (c) bare grpc-js anchor, (a) in-process backend,
 * (b) Redis, each with 1 and 3 descriptors, and (a, b) one sliding_window and one token_bucket
 * descriptor (issue 42: against the same one-descriptor anchor); then Redis with WORKERS=<cores>.
 */
const run = promisify(execFile);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 32);
/**
 * Extra node flags for the service processes only (e.g. V8 heap settings), to measure their effect;
 * they come after the service's own `platform.nodeFlags`, so they can override them.
 */
const EXTRA_NODE_FLAGS = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

const work = mkdtempSync(join(tmpdir(), 'rl-bench-'));
mkdirSync(join(work, 'config'));
writeFileSync(
  join(work, 'config', 'bench.yaml'),
  `domain: bench
descriptors:
${[1, 2, 3].map((i) => `  - key: k${i}\n    rate_limit: { unit: second, requests_per_unit: 1000000000 }\n`).join('')}  - key: sw
    rate_limit: { unit: second, requests_per_unit: 1000000000, algorithm: sliding_window }
  - key: tb
    rate_limit: { unit: second, requests_per_unit: 1000000000, algorithm: token_bucket }
`,
);

/** A phase's request: 1 or 3 fixed-window descriptors, or one descriptor of another algorithm. */
type Frame = 1 | 3 | 'sliding_window' | 'token_bucket';
const ALGORITHM_KEYS = { sliding_window: 'sw', token_bucket: 'tb' } as const;
const frameLabel = (f: Frame): string =>
  typeof f === 'number' ? `${f} descriptor${f > 1 ? 's' : ''}` : `1 ${f} descriptor`;

function frame(kind: Frame): string {
  const keys =
    typeof kind === 'number' ? Array.from({ length: kind }, (_, i) => `k${i + 1}`) : [ALGORITHM_KEYS[kind]];
  const request: RateLimitRequest = {
    domain: 'bench',
    descriptors: keys.map((key) => ({ entries: [{ key, value: 'v' }] })),
    hitsAddend: 0,
  };
  const body = encodeRequest(request);
  const header = Buffer.alloc(5);
  header.writeUInt32BE(body.length, 1);
  const file = join(work, `frame-${kind}.bin`);
  writeFileSync(file, Buffer.concat([header, body]));
  return file;
}

function peakRssMb(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    total += kb;
  }
  return total / 1024;
}

async function h2load(port: number, descriptors: Frame, requests: number, log?: string): Promise<string> {
  const args = [
    '-n',
    String(requests),
    '-c',
    String(CONNECTIONS),
    '-m',
    String(STREAMS),
    '-d',
    frame(descriptors),
  ];
  args.push('-H', 'content-type: application/grpc', '-H', 'te: trailers');
  if (log) args.push(`--log-file=${log}`);
  args.push(`http://127.0.0.1:${port}${PATH}`);
  // h2load 1.52's timing mode (-D) sends nothing when a body file is given: request counts are used.
  const { stdout } = await run('h2load', args, { maxBuffer: 1 << 24 });
  return stdout;
}

async function waitPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const out = await h2load(port, 1, CONNECTIONS).catch(() => '');
    if (new RegExp(` ${CONNECTIONS} succeeded`).test(out)) return;
    await sleep(100);
  }
  throw new Error(`port ${port} never answered: ${await h2load(port, 1, 1).catch((e: Error) => e.message)}`);
}

interface Target {
  label: string;
  port: number;
  proc: ChildProcess;
  descriptors: Frame[];
  /** Last measured calls/s per frame, to size the next run to about SECONDS. */
  rate: Map<Frame, number>;
}

interface Sample {
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  /** CPU time (user + system) the phase's processes spent per call: far less noisy than calls/s on a shared machine. */
  cpuUsPerCall: number;
}

async function measure(t: Target, descriptors: Frame, round: number): Promise<Sample> {
  const log = join(work, `${t.label.replace(/\W+/g, '_')}-${descriptors}-${round}.log`);
  const n = Math.max(3000, Math.round((t.rate.get(descriptors) ?? 3000) * SECONDS));
  const pids = processTree(t.proc.pid!);
  const cpuBefore = cpuMicros(pids);
  const stdout = await h2load(t.port, descriptors, n, log);
  const cpuUsPerCall = (cpuMicros(pids) - cpuBefore) / n;
  const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(stdout)?.[1] ?? 0);
  t.rate.set(descriptors, rps);
  const failed =
    Number(/(\d+) failed/.exec(stdout)?.[1] ?? 0) + Number(/(\d+) errored/.exec(stdout)?.[1] ?? 0);
  const latencies = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => Number(l.split('\t')[2]))
    .filter((x) => Number.isFinite(x))
    .sort((x, y) => x - y);
  const at = (q: number) =>
    (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) / 1000;
  return { rps, p50ms: at(0.5), p99ms: at(0.99), errors: failed, cpuUsPerCall };
}

/** A compiled-JavaScript process (`nodeArgs`: flags, entry and its arguments). */
function start(nodeArgs: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, nodeArgs, {
    cwd: SERVICE,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
}

async function service(label: string, extra: NodeJS.ProcessEnv, descriptors: Frame[]): Promise<Target> {
  const port = await freePort();
  const grpcPort = await freePort();
  const env = {
    RUNTIME_ROOT: work,
    PORT: String(port),
    GRPC_PORT: String(grpcPort),
    GRPC_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    // Several services run at once: each its own debug port; no harness REDIS_URL (an alias of KVSTORE_URL).
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: '0',
    REDIS_URL: '',
    ...extra,
  };
  return {
    label,
    port: grpcPort,
    proc: start(serviceNodeArgs(EXTRA_NODE_FLAGS), env),
    descriptors,
    rate: new Map(),
  };
}

/** How the Redis figures move with WORKERS (1 is the single-process 'b: redis' phase). */
function printWorkers(counts: number[], samples: Map<string, Sample[]>, rss: Map<string, number>): void {
  const one = 'b: redis';
  const base = median((samples.get(`${one}, 1 descriptor`) ?? []).map((x) => x.rps));
  console.log(`\nWORKERS (Redis, 1 descriptor; ${cpus().length} cores shared with h2load and redis-server):`);
  for (const n of [1, ...counts]) {
    const label = n === 1 ? one : `b: redis, WORKERS=${n}`;
    const list = samples.get(`${label}, 1 descriptor`) ?? [];
    const rps = median(list.map((x) => x.rps));
    const mid = list.length > 0 ? nearest(list, rps) : undefined;
    console.log(
      `  WORKERS=${n}: ${rps.toFixed(0)}/s median (${(rps / base).toFixed(2)}x WORKERS=1),` +
        ` p50 ${mid?.p50ms.toFixed(2)} ms, p99 ${mid?.p99ms.toFixed(2)} ms, peak RSS ${rss.get(label)?.toFixed(0)} MB,` +
        ` CPU ${median(list.map((x) => x.cpuUsPerCall)).toFixed(1)} us/call (all processes)` +
        (n > 1 ? ` (${n + 1} processes)` : ''),
    );
  }
}

/** The round whose calls/s is nearest the median: its latencies are the ones printed. */
const nearest = (list: readonly Sample[], rps: number): Sample =>
  list.reduce((a, x) => (Math.abs(x.rps - rps) < Math.abs(a.rps - rps) ? x : a));

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  // WORKERS=1 is the plain 'b: redis' phase; each count listed here adds a phase.
  const workerCounts = (process.env.BENCH_WORKERS ?? '2')
    .split(',')
    .map(Number)
    .filter((n) => n > 1);
  console.log(
    `machine load average at the start: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  await ensureServiceBuilt();
  const anchorEntry = ensureAnchorBuilt();
  const redis = await startRedis({ fresh: true });
  const raw = new Redis({ host: redis.host, port: redis.port });
  const commandStats = async () => {
    const info = await raw.info('commandstats');
    const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return {
      incrby: calls('incrby'),
      expire: calls('expire'),
      evalsha: calls('evalsha'),
      total: [...info.matchAll(/calls=(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0),
    };
  };
  const anchorPort = await freePort();
  const targets: Target[] = [
    {
      label: 'c: anchor (bare grpc-js)',
      port: anchorPort,
      proc: start([anchorEntry, String(anchorPort), PROTO_DIR], {}),
      descriptors: [1, 3],
      rate: new Map(),
    },
    await service('a: in-process backend', {}, [1, 3, 'sliding_window', 'token_bucket']),
    await service('b: redis', { KVSTORE_URL: `${redis.host}:${redis.port}` }, [
      1,
      3,
      'sliding_window',
      'token_bucket',
    ]),
    await service(
      'b: redis, KVSTORE_PIPELINE_WINDOW=100us',
      { KVSTORE_URL: `${redis.host}:${redis.port}`, KVSTORE_PIPELINE_WINDOW: '100us' },
      [1],
    ),
  ];
  for (const n of workerCounts) {
    targets.push(
      await service(
        `b: redis, WORKERS=${n}`,
        { KVSTORE_URL: `${redis.host}:${redis.port}`, WORKERS: String(n) },
        [1],
      ),
    );
  }
  const samples = new Map<string, Sample[]>();
  try {
    for (const t of targets) {
      await waitPort(t.port);
      for (const d of t.descriptors) await h2load(t.port, d, 5000); // JIT warm-up
    }
    // Command count check: a counted batch of 1-descriptor calls against the single-worker Redis service.
    const redisTarget = targets[2]!;
    const before = await commandStats();
    const checkOut = await h2load(redisTarget.port, 1, 2000);
    const after = await commandStats();
    const checked = Number(/(\d+) succeeded/.exec(checkOut)?.[1] ?? 0);
    // The same for the other algorithms: one script call per call, nothing else.
    const scriptChecks: string[] = [];
    for (const kind of ['sliding_window', 'token_bucket'] as const) {
      const b0 = await commandStats();
      const out = await h2load(redisTarget.port, kind, 2000);
      const b1 = await commandStats();
      scriptChecks.push(
        `${kind}: ${Number(/(\d+) succeeded/.exec(out)?.[1] ?? 0)} calls, EVALSHA +${b1.evalsha - b0.evalsha}, all commands +${b1.total - b0.total - 1}`,
      );
    }

    // Interleaved rounds, so the noise of a shared machine spreads over every phase alike.
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) {
        for (const d of t.descriptors) {
          const key = `${t.label}, ${frameLabel(d)}`;
          const list = samples.get(key) ?? [];
          list.push(await measure(t, d, round));
          samples.set(key, list);
        }
      }
    }
    const rss = new Map(targets.map((t) => [t.label, peakRssMb(processTree(t.proc.pid!))]));

    console.log(
      `\nShouldRateLimit via h2load -c ${CONNECTIONS} -m ${STREAMS}; ${rounds} interleaved runs of ~${SECONDS}s each (median and best)\n`,
    );
    console.log(
      'phase'.padEnd(50) +
        'median/s'.padStart(10) +
        'best/s'.padStart(9) +
        'p50 ms'.padStart(9) +
        'p99 ms'.padStart(9) +
        'errors'.padStart(8) +
        'peak RSS MB'.padStart(13) +
        'CPU us/call'.padStart(13),
    );
    const rpsOf = new Map<string, number>();
    const bestOf = new Map<string, number>();
    const cpuOf = new Map<string, number>();
    for (const [key, list] of samples) {
      const rps = median(list.map((x) => x.rps));
      const cpu = median(list.map((x) => x.cpuUsPerCall));
      cpuOf.set(key, cpu);
      const mid = nearest(list, rps);
      rpsOf.set(key, rps);
      const best = Math.max(...list.map((x) => x.rps));
      bestOf.set(key, best);
      const label = targets.find(
        (t) =>
          key.startsWith(t.label) &&
          key.slice(t.label.length).startsWith(', ') &&
          /^\d/.test(key.slice(t.label.length + 2)),
      )!.label;
      console.log(
        key.padEnd(50) +
          rps.toFixed(0).padStart(10) +
          best.toFixed(0).padStart(9) +
          mid.p50ms.toFixed(2).padStart(9) +
          mid.p99ms.toFixed(2).padStart(9) +
          String(list.reduce((a, x) => a + x.errors, 0)).padStart(8) +
          rss.get(label)!.toFixed(0).padStart(13) +
          cpu.toFixed(1).padStart(13),
      );
    }
    const ratio = (m: Map<string, number>, x: string, y: string) => (m.get(x)! / m.get(y)!).toFixed(2);
    for (const d of [1, 3]) {
      const suffix = `, ${d} descriptor${d > 1 ? 's' : ''}`;
      const [a, b, c] = ['a: in-process backend', 'b: redis', 'c: anchor (bare grpc-js)'].map(
        (l) => l + suffix,
      ) as [string, string, string];
      console.log(
        `${d} descriptor(s): a/c = ${ratio(rpsOf, a, c)} median, ${ratio(bestOf, a, c)} best (target >= 0.9);` +
          ` b/c = ${ratio(rpsOf, b, c)} median, ${ratio(bestOf, b, c)} best (target >= 0.75 with 1 descriptor)`,
      );
    }
    for (const d of [1, 3]) {
      const suffix = `, ${d} descriptor${d > 1 ? 's' : ''}`;
      const anchorCpu = cpuOf.get(`c: anchor (bare grpc-js)${suffix}`)!;
      console.log(
        `${d} descriptor(s), CPU per call against the anchor's ${anchorCpu.toFixed(1)} us (the load-independent view of the same ratio): ` +
          ['a: in-process backend', 'b: redis']
            .map((l) => `${l} ${(anchorCpu / cpuOf.get(l + suffix)!).toFixed(2)}x`)
            .join(', ') +
          ' (anchor CPU / service CPU; the Redis figure leaves out redis-server)',
      );
    }
    const anchorRss = rss.get('c: anchor (bare grpc-js)')!;
    console.log(
      `peak RSS against the anchor's ${anchorRss.toFixed(0)} MB (target <= 1.1x): ` +
        ['a: in-process backend', 'b: redis']
          .map((l) => `${l} ${(rss.get(l)! / anchorRss).toFixed(2)}x`)
          .join(', '),
    );
    const anchorOne = 'c: anchor (bare grpc-js), 1 descriptor';
    for (const kind of ['sliding_window', 'token_bucket'] as const) {
      const [a, b] = ['a: in-process backend', 'b: redis'].map((l) => `${l}, ${frameLabel(kind)}`) as [
        string,
        string,
      ];
      const anchorCpu = cpuOf.get(anchorOne)!;
      console.log(
        `${kind}: a/c = ${ratio(rpsOf, a, anchorOne)} median, ${ratio(bestOf, a, anchorOne)} best (target >= 1.0);` +
          ` b/c = ${ratio(rpsOf, b, anchorOne)} median, ${ratio(bestOf, b, anchorOne)} best (target >= 0.75);` +
          ` CPU anchor/service ${(anchorCpu / cpuOf.get(a)!).toFixed(2)}x in-process, ${(anchorCpu / cpuOf.get(b)!).toFixed(2)}x Redis`,
      );
    }
    const windowed = 'b: redis, KVSTORE_PIPELINE_WINDOW=100us, 1 descriptor';
    const anchor1 = 'c: anchor (bare grpc-js), 1 descriptor';
    console.log(
      `redis with KVSTORE_PIPELINE_WINDOW=100us, 1 descriptor: b/c = ${ratio(rpsOf, windowed, anchor1)} median, ${ratio(bestOf, windowed, anchor1)} best`,
    );
    printWorkers(workerCounts, samples, rss);
    console.log(
      `redis INFO commandstats over ${checked} one-descriptor calls: INCRBY +${after.incrby - before.incrby}, EXPIRE +${after.expire - before.expire}, all commands +${after.total - before.total - 1}` +
        ' (the INFO call itself excluded); the commands of one call go out in one write and are answered in one round trip',
    );
    console.log(
      `redis INFO commandstats, one descriptor of another algorithm per call: ${scriptChecks.join('; ')}`,
    );
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`machine load average at the end: ${load} (${cpus().length} cores)`);
  } finally {
    for (const t of targets) await stop(t.proc);
    raw.disconnect();
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
