/**
 * What the metrics cost on order entry (`npm run bench:e2e -w services/exchange -- --metrics-compare`):
 * signed `/v3/auth/w/order/submit` requests against two server processes started side by side at
 * the beginning (bench/support/order-server.ts), one built with a metrics registry (per-route
 * counters and histogram, refusal counter: what the server does unless METRICS_PORT=off) and one
 * without, each over a fresh database of its own with the same number of funded keys, so both start
 * from the same state and grow alike.
 *
 * Both are loaded at the same time in every round (`--rounds`, default 8, `--seconds` each, default
 * 3), each by a load generator of its own with `--concurrency` clients: whatever else the machine
 * runs during a round slows both alike, and the two processes share the cores, so the one whose
 * requests cost more CPU answers fewer. (Phases one after the other, even interleaved ABBA, moved by
 * +-20% between neighbouring phases on the shared 2-core machine, and as much with the same app on
 * both sides.) The figure is the median of the per-round ratios on/off; beside it the CPU each
 * request cost each server process. `--same` builds both without metrics: the noise floor (A/A).
 * Both servers run on core 0 (`--pin <core>`, `--no-pin` to leave them to the scheduler), so that
 * they share one core fairly whatever else the machine runs.
 * Target: on >= 0.97x off.
 */
import { fork } from 'node:child_process';
import { cpuMicros, pinToCore } from '@platform/testkit/cpu';
import { median } from '@platform/testkit/stats';
import { runOrderLoad } from './support/order-load.js';
import type { ServerJob, ServerReady } from './support/order-server.js';

interface Side {
  readonly name: string;
  readonly pid: number;
  readonly ready: ServerReady;
  close(): Promise<void>;
  readonly rates: number[];
  readonly cpu: number[];
}

async function startServer(name: string, job: ServerJob): Promise<Side> {
  // The parent runs under tsx, whose loader flags `fork` passes on (process.execArgv).
  const child = fork(new URL('./support/order-server.ts', import.meta.url));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerReady));
    child.once('exit', (code) => reject(new Error(`order server ${name} exited with ${code}`)));
    child.send(job);
  });
  return {
    name,
    pid: child.pid as number,
    ready,
    rates: [],
    cpu: [],
    async close() {
      child.send('close');
      await exited;
    },
  };
}

/** Measures metrics on against off (see the header) and prints the figures. */
export async function compareMetricsCost(options: {
  concurrency: number;
  seconds: number;
  rounds: number;
  poolSize: number;
  depth: number;
  asyncCommit: boolean;
  same: boolean;
  /** The core both servers run on (`taskset`), or undefined: wherever the scheduler puts them. */
  pin: number | undefined;
}): Promise<void> {
  const job = {
    clients: options.concurrency,
    poolSize: options.poolSize,
    depth: options.depth,
    asyncCommit: options.asyncCommit,
  };
  const sides: Side[] = [];
  try {
    sides.push(await startServer('on', { ...job, metrics: !options.same }));
    sides.push(await startServer('off', { ...job, metrics: false }));
    if (options.pin !== undefined) {
      // Both servers (all their threads) on one core: the scheduler shares that core between them
      // fairly, whatever else runs on the machine's other cores; unpinned, one of them could sit on
      // the core another user's job keeps busy for a whole run.
      for (const side of sides) pinToCore(side.pid, options.pin);
    }
    const [on, off] = sides as [Side, Side];
    const round = async (ms: number, record: boolean, order: readonly Side[]) => {
      // Both clocks start once both generators have signed their requests.
      let prepared = 0;
      let go = () => {};
      const start = new Promise<void>((resolve) => {
        go = resolve;
      });
      const cpuStart = new Map<Side, number>();
      const barrier = {
        prepared: () => {
          prepared += 1;
          if (prepared < sides.length) return;
          for (const side of sides) cpuStart.set(side, cpuMicros([side.pid]));
          go();
        },
        start,
      };
      await Promise.all(
        order.map(async (side) => {
          const path = '/v3/auth/w/order/submit';
          const result = await runOrderLoad(side.ready.url, path, side.ready.keys, ms, barrier);
          const cpu = cpuMicros([side.pid]) - (cpuStart.get(side) as number);
          if (result.errors > 0) console.log(`  ${side.name}: ${result.errors} requests not answered 200`);
          if (!record) return;
          side.rates.push(result.perSecond);
          side.cpu.push(cpu / Math.max(1, result.requests));
        }),
      );
    };
    // Warm-up (JIT, pools, serializers), off the record.
    await round(2_000, false, sides);
    const ratios: number[] = [];
    for (let r = 0; r < options.rounds; r += 1) {
      // Which generator is forked first alternates, so that neither side always starts second.
      await round(options.seconds * 1000, true, r % 2 === 0 ? [on, off] : [off, on]);
      ratios.push((on.rates[r] as number) / (off.rates[r] as number));
    }
    const ratio = median(ratios);
    const list = (values: readonly number[], digits = 0) => values.map((v) => v.toFixed(digits)).join(' ');
    console.log(
      `order entry, ${options.concurrency} clients per server, both loaded at once, ${options.rounds} rounds of ` +
        `${options.seconds} s, ${options.asyncCommit ? 'synchronous_commit off' : 'synchronous commit'}` +
        `${options.same ? ', A/A: metrics off on both sides' : ''}` +
        `${options.pin === undefined ? '' : `, both servers on core ${options.pin}`}\n` +
        `  metrics on  ${list(on.rates)} req/s\n` +
        `  metrics off ${list(off.rates)} req/s\n` +
        `  per-round ratios ${list(ratios, 3)}\n` +
        `  median per-round ratio ${ratio.toFixed(3)}x (target >= 0.97x) ${ratio >= 0.97 ? 'OK' : 'BELOW TARGET'}\n` +
        `  server CPU per request (10 ms ticks): on ${list(on.cpu)} us | off ${list(off.cpu)} us | ` +
        `median off/on ${(median(off.cpu) / median(on.cpu)).toFixed(3)}x`,
    );
  } finally {
    for (const side of sides) await side.close();
  }
}
