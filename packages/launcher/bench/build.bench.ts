import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '@platform/testkit/ports';
import { buildProjects } from '../src/build/build.js';
import { type BuildProject, readProject } from '../src/build/project.js';
import { COMPILED_NODE_FLAGS, compiledEntry } from '../src/build/run-compiled.js';
import { discoverServices, type ServiceSpec } from '../src/discover.js';
import { burst, cpuMsOf, median, memoryOf, startUntilHealthy, stop } from './measure.js';
import { TARGETS } from './targets.js';

/**
 * Compiled build against the tsx run, per service, in the same run (not a test):
 *   npm run bench:build            (BENCH_ROUNDS=3 BENCH_REQUESTS=3000 BENCH_CONCURRENCY=16 BENCH_ONLY=a,b)
 * Each round starts every service once compiled (`node --enable-source-maps` on dist/) and once
 * through tsx (`node --import tsx` on src/, as the launcher ran them before), alternating which goes
 * first, and measures: spawn to first 2xx of the health URL (wall time, and the CPU time the process
 * used until then, which other load on the machine barely changes); RSS after a second of idling; peak
 * RSS (VmHWM) after a burst of cheap requests. Medians are printed with ratios compiled/tsx.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const IDLE_MS = 1_000;
const TSX_LOADER = import.meta.resolve('tsx');

type Mode = 'compiled' | 'tsx';
interface Sample {
  startMs: number;
  /** CPU time the process used until healthy: the start-up work, whatever else loads the machine. */
  startCpuMs: number;
  idleMb: number;
  loadedPeakMb: number;
  failed: number;
}

const specs = discoverServices(join(repoRoot, 'services')).filter(
  (s) => s.compilable && TARGETS[s.name] && (!ONLY || ONLY.includes(s.name)),
);
const seen = new Map<string, BuildProject>();
const built = await buildProjects(
  specs.map((s) => readProject(s.dir, seen)),
  { onlyStale: true },
);
if (!built.ok) {
  process.stderr.write(built.output);
  process.exit(1);
}

function argsOf(spec: ServiceSpec, mode: Mode): string[] {
  return mode === 'compiled'
    ? [...COMPILED_NODE_FLAGS, compiledEntry(spec.dir, spec.entry)]
    : ['--import', TSX_LOADER, spec.entry];
}

/** Starts the service on free ports with its data under `cwd`; resolves once it is healthy. */
async function launch(spec: ServiceSpec, mode: Mode, cwd: string) {
  const target = TARGETS[spec.name]!;
  const ports = await Promise.all(target.portSettings.map(() => freePort()));
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', ...target.env };
  delete env.INIT_CWD; // the exchange would look for its data where npm was invoked
  target.portSettings.forEach((name, i) => {
    env[name] = String(ports[i]);
  });
  const base = `http://127.0.0.1:${ports[0]}`;
  const health = `${base}${new URL(spec.health).pathname}`;
  const started = await startUntilHealthy(argsOf(spec, mode), { cwd, env, health, timeoutMs: 120_000 });
  return { ...started, base, health };
}

async function runOnce(spec: ServiceSpec, mode: Mode, cwd: string): Promise<Sample> {
  const { child, startMs, base, health } = await launch(spec, mode, cwd);
  const startCpuMs = cpuMsOf(child.pid!);
  try {
    await sleep(IDLE_MS); // idle means: after start-up work settled, measured the same way for both
    const idleMb = memoryOf(child.pid!).rss;
    const load = TARGETS[spec.name]!.load;
    const failed = await burst(
      load ? `${base}${load.path}` : health,
      load ? { method: load.method, body: load.body, headers: { 'content-type': load.contentType } } : {},
      REQUESTS,
      CONCURRENCY,
    );
    return { startMs, startCpuMs, idleMb, loadedPeakMb: memoryOf(child.pid!).peak, failed };
  } finally {
    await stop(child);
  }
}

const fmt = (n: number, digits = 0): string => n.toFixed(digits);
const rows: string[][] = [
  [
    'service',
    'start ms c/tsx',
    'speed-up',
    'start CPU ms c/tsx',
    'speed-up',
    'idle MiB c/tsx',
    'ratio',
    'loaded peak MiB c/tsx',
    'ratio',
    '5xx',
  ],
];
const totals = { c: { start: 0, cpu: 0, idle: 0, peak: 0 }, t: { start: 0, cpu: 0, idle: 0, peak: 0 } };
for (const spec of specs) {
  // One working folder per service for every run: ./data/... is created by the warm-up and reused,
  // so both modes restart an existing installation (first-run database set-up is not measured).
  const cwd = mkdtempSync(join(tmpdir(), `build-bench-${spec.name}-`));
  await stop((await launch(spec, 'compiled', cwd)).child);
  const samples: Record<Mode, Sample[]> = { compiled: [], tsx: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const order: Mode[] = round % 2 === 0 ? ['compiled', 'tsx'] : ['tsx', 'compiled'];
    for (const mode of order) samples[mode].push(await runOnce(spec, mode, cwd));
  }
  rmSync(cwd, { recursive: true, force: true });
  const m = (mode: Mode, key: keyof Sample): number => median(samples[mode].map((s) => s[key]));
  const of = (mode: Mode) => ({
    start: m(mode, 'startMs'),
    cpu: m(mode, 'startCpuMs'),
    idle: m(mode, 'idleMb'),
    peak: m(mode, 'loadedPeakMb'),
  });
  const c = of('compiled');
  const t = of('tsx');
  for (const k of ['start', 'cpu', 'idle', 'peak'] as const) {
    totals.c[k] += c[k];
    totals.t[k] += t[k];
  }
  const failed = [...samples.compiled, ...samples.tsx].reduce((sum, s) => sum + s.failed, 0);
  rows.push([
    spec.name,
    `${fmt(c.start)} / ${fmt(t.start)}`,
    `${fmt(t.start / c.start, 2)}x`,
    `${fmt(c.cpu)} / ${fmt(t.cpu)}`,
    `${fmt(t.cpu / c.cpu, 2)}x`,
    `${fmt(c.idle)} / ${fmt(t.idle)}`,
    fmt(c.idle / t.idle, 2),
    `${fmt(c.peak)} / ${fmt(t.peak)}`,
    fmt(c.peak / t.peak, 2),
    String(failed),
  ]);
  process.stderr.write(`measured ${spec.name}\n`);
}
rows.push([
  'all (sum)',
  `${fmt(totals.c.start)} / ${fmt(totals.t.start)}`,
  `${fmt(totals.t.start / totals.c.start, 2)}x`,
  `${fmt(totals.c.cpu)} / ${fmt(totals.t.cpu)}`,
  `${fmt(totals.t.cpu / totals.c.cpu, 2)}x`,
  `${fmt(totals.c.idle)} / ${fmt(totals.t.idle)}`,
  fmt(totals.c.idle / totals.t.idle, 2),
  `${fmt(totals.c.peak)} / ${fmt(totals.t.peak)}`,
  fmt(totals.c.peak / totals.t.peak, 2),
  '',
]);

const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
const print = (r: string[]): string =>
  r
    .map((cell, c) => cell.padEnd(widths[c]!))
    .join('  ')
    .trimEnd();
process.stdout.write(
  [
    `compiled (c) vs tsx, median of ${ROUNDS} round(s); load: ${REQUESTS} requests, ${CONCURRENCY} at a time`,
    print(rows[0]!),
    ...rows.slice(1).map(print),
    'targets: start speed-up >= 2x, RSS ratio <= 0.75 (at least 25% less)',
  ].join('\n') + '\n',
);
