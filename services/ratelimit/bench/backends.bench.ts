import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, startRedisCluster } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import {
  frame,
  h2load,
  type Load,
  measure,
  type ServiceProcess,
  startService,
  stopProcess,
  waitPort,
} from './h2load.js';

/**
 * Production backends (not a test):  npm run bench:backends -w services/ratelimit
 *   (BENCH_SECONDS=3 BENCH_ROUNDS=2 BENCH_CONNECTIONS=4 BENCH_STREAMS=32)
 * 1. ShouldRateLimit with 3 descriptors against a 3-master Redis Cluster, next to the same load on
 *    a single Redis (the anchor, same run): calls/s, p50/p99.
 * 2. Backend commands and round trips per call: deltas of INFO commandstats and of
 *    `total_reads_processed` (socket reads, i.e. client writes) summed over the masters, over a
 *    sequential batch (one call in flight, so writes are not coalesced across calls) and a loaded one.
 * 3. Local over-limit cache: an over-limit key with LOCAL_CACHE_SIZE_IN_BYTES on and off; the ratio of
 *    backend INCRBYs to calls.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LOAD: Load = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 4),
  streams: Number(process.env.BENCH_STREAMS ?? 32),
};
const SEQUENTIAL: Load = { connections: 1, streams: 1 };

const work = mkdtempSync(join(tmpdir(), 'rl-bench-backends-'));
mkdirSync(join(work, 'config'));
writeFileSync(
  join(work, 'config', 'bench.yaml'),
  `domain: bench
descriptors:
${[1, 2, 3].map((i) => `  - key: k${i}\n    rate_limit: { unit: second, requests_per_unit: 1000000000 }\n`).join('')}
  - key: over
    rate_limit: { unit: minute, requests_per_unit: 1 }
`,
);
const three = frame(work, ['k1', 'k2', 'k3']);
const over = frame(work, ['over']);

/** Sums INFO counters over a set of Redis servers. */
async function counters(nodes: readonly Redis[]) {
  let incrby = 0;
  let expire = 0;
  let commands = 0;
  let reads = 0;
  for (const node of nodes) {
    const info = await node.info('all');
    incrby += Number(/cmdstat_incrby:calls=(\d+)/.exec(info)?.[1] ?? 0);
    expire += Number(/cmdstat_expire:calls=(\d+)/.exec(info)?.[1] ?? 0);
    commands += [...info.matchAll(/cmdstat_\w+:calls=(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0);
    reads += Number(/total_reads_processed:(\d+)/.exec(info)?.[1] ?? 0);
  }
  return { incrby, expire, commands, reads };
}

/** Per-call deltas of backend commands and socket reads over `calls` calls of `frameFile`. */
async function perCall(
  s: ServiceProcess,
  nodes: readonly Redis[],
  frameFile: string,
  calls: number,
  load: Load,
) {
  const before = await counters(nodes);
  const { succeeded } = await h2load(s.port, frameFile, calls, load);
  const after = await counters(nodes);
  // The INFO calls themselves (one command and one read per node) are excluded.
  const n = nodes.length;
  return {
    calls: succeeded,
    incrby: (after.incrby - before.incrby) / succeeded,
    expire: (after.expire - before.expire) / succeeded,
    commands: (after.commands - before.commands - n) / succeeded,
    reads: (after.reads - before.reads - n) / succeeded,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const single = await startRedis({ fresh: true });
  const cluster = await startRedisCluster(3);
  const singleNodes = [new Redis({ host: single.host, port: single.port })];
  const masters = cluster.nodes.map((n) => new Redis({ host: n.host, port: n.port }));
  const services: ServiceProcess[] = [];
  const spawnService = async (env: NodeJS.ProcessEnv) => {
    const s = await startService(work, env);
    services.push(s);
    return s;
  };
  try {
    const onSingle = await spawnService({ KVSTORE_URL: `${single.host}:${single.port}` });
    const onCluster = await spawnService({ KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' });
    const cached = await spawnService({
      KVSTORE_URL: `${single.host}:${single.port}`,
      LOCAL_CACHE_SIZE_IN_BYTES: String(1 << 20),
    });
    for (const s of services) {
      await waitPort(s.port, three);
      await h2load(s.port, three, 3000, LOAD); // warm-up
    }

    const phases = [
      { label: 'anchor: Redis single, 3 descriptors', s: onSingle },
      { label: 'Redis Cluster (3 masters), 3 descriptors', s: onCluster },
    ];
    const results = new Map<string, { rps: number; p50ms: number; p99ms: number; errors: number }[]>();
    const rate = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of phases) {
        const n = Math.max(3000, Math.round((rate.get(p.label) ?? 3000) * SECONDS));
        const r = await measure(p.s.port, three, n, LOAD, join(work, `log-${round}-${p.s.port}`));
        rate.set(p.label, r.rps);
        results.set(p.label, [...(results.get(p.label) ?? []), r]);
      }
    }
    console.log(
      `\nShouldRateLimit via h2load -c ${LOAD.connections} -m ${LOAD.streams}, ${ROUNDS} interleaved runs of ~${SECONDS}s (median run)\n`,
    );
    console.log(
      `${'phase'.padEnd(46)}${'calls/s'.padStart(9)}${'decisions/s'.padStart(13)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'errors'.padStart(8)}`,
    );
    const mid = new Map<string, number>();
    for (const [label, list] of results) {
      const rps = median(list.map((x) => x.rps));
      const m = list.find((x) => x.rps === rps)!;
      mid.set(label, rps);
      const errors = list.reduce((a, x) => a + x.errors, 0);
      console.log(
        `${label.padEnd(46)}${rps.toFixed(0).padStart(9)}${(rps * 3).toFixed(0).padStart(13)}${m.p50ms.toFixed(2).padStart(8)}${m.p99ms.toFixed(2).padStart(8)}${String(errors).padStart(8)}`,
      );
    }
    const [a, c] = phases.map((p) => mid.get(p.label)!) as [number, number];
    console.log(`cluster / single (same run): ${(c / a).toFixed(2)}`);

    console.log('\nBackend work per call (3 descriptors), summed over the Redis servers:');
    for (const [label, s, nodes] of [
      ['Redis single', onSingle, singleNodes],
      ['Redis Cluster', onCluster, masters],
    ] as const) {
      for (const [mode, calls, load] of [
        ['sequential', 300, SEQUENTIAL],
        ['loaded', 3000, LOAD],
      ] as const) {
        const r = await perCall(s, nodes, three, calls, load);
        console.log(
          `  ${label.padEnd(14)} ${mode.padEnd(10)} ${r.calls} calls: INCRBY ${r.incrby.toFixed(2)}, EXPIRE ${r.expire.toFixed(2)}, all commands ${r.commands.toFixed(2)}, server socket reads (round trips) ${r.reads.toFixed(2)} per call`,
        );
      }
    }
    const perMaster = await Promise.all(
      masters.map(async (m) =>
        Number(/cmdstat_incrby:calls=(\d+)/.exec(await m.info('commandstats'))?.[1] ?? 0),
      ),
    );
    console.log(
      `  INCRBYs per master over the whole run: ${perMaster.join(' / ')} (the 3 keys of a call spread over the masters)`,
    );

    console.log('\nLocal over-limit cache: one key over its 1-per-minute limit, 3000 calls under load:');
    for (const [label, s] of [
      ['LOCAL_CACHE_SIZE_IN_BYTES=0', onSingle],
      ['LOCAL_CACHE_SIZE_IN_BYTES=1048576', cached],
    ] as const) {
      await h2load(s.port, over, 2, SEQUENTIAL); // the key goes over its limit
      const r = await perCall(s, singleNodes, over, 3000, LOAD);
      const speed = await h2load(s.port, over, 3000, LOAD);
      console.log(
        `  ${label.padEnd(34)} backend INCRBY / calls = ${r.incrby.toFixed(3)}, all commands / calls = ${r.commands.toFixed(3)}; ${speed.rps.toFixed(0)} calls/s`,
      );
    }
  } finally {
    for (const s of services) await stopProcess(s.proc);
    for (const r of [...singleNodes, ...masters]) r.disconnect();
    await single.stop();
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
