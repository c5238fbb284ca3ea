import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { discoverServices, type ServiceSpec } from './discover.js';
import { SupervisedService } from './supervisor.js';
import { renderTable } from './table.js';

/**
 * `npm start`: runs every service that exists on its embedded defaults, each in its own process.
 *
 * Flags: `--only a,b` starts a subset; `--services-dir` and `--cwd` point it elsewhere (tests);
 * `--health-timeout` in seconds (default 60); `--grace` seconds before SIGKILL on stop (default 10).
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    'services-dir': { type: 'string' },
    cwd: { type: 'string' },
    'health-timeout': { type: 'string', default: '60' },
    grace: { type: 'string', default: '10' },
  },
});

const out = process.stdout;
const say = (line: string): void => {
  out.write(`launcher | ${line}\n`);
};

function positiveSeconds(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    say(`--${name} must be a positive number of seconds, got '${raw}'`);
    process.exit(2);
  }
  return n * 1000;
}

const healthTimeoutMs = positiveSeconds('health-timeout', values['health-timeout']);
const graceMs = positiveSeconds('grace', values.grace);
const cwd = resolve(values.cwd ?? repoRoot);
let specs: ServiceSpec[] = discoverServices(resolve(values['services-dir'] ?? join(repoRoot, 'services')));
if (values.only) {
  const wanted = new Set(values.only.split(',').map((s) => s.trim()));
  const unknown = [...wanted].filter((w) => !specs.some((s) => s.name === w));
  if (unknown.length > 0) {
    say(`unknown service(s) in --only: ${unknown.join(', ')} (have: ${specs.map((s) => s.name).join(', ')})`);
    process.exit(2);
  }
  specs = specs.filter((s) => wanted.has(s.name));
}
if (specs.length === 0) {
  say('no runnable service found (a service needs a "platform" field in its package.json and src/server.ts)');
  process.exit(1);
}

const prefixWidth = Math.max('launcher'.length, ...specs.map((s) => s.name.length));
const services = specs.map(
  (spec, index) => new SupervisedService(spec, { cwd, prefixWidth, color: out.isTTY === true, index, out }),
);
const byName = new Map(services.map((s) => [s.spec.name, s]));

let stopping = false;
async function stopAll(signal: string): Promise<void> {
  if (stopping) {
    say(`${signal} again: killing everything now`);
    process.exit(130);
  }
  stopping = true;
  say(`${signal} received, stopping ${services.length} service(s)...`);
  await Promise.all(services.map((s) => s.stop(graceMs)));
  say('all services stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));
// `npm start` runs the launcher under `sh -c`; a SIGTERM sent to npm kills that shell without passing
// the signal on. Losing the parent therefore means "stop": the services never outlive the command.
const parentAtStart = process.ppid;
setInterval(() => {
  if (process.ppid !== parentAtStart) void stopAll('parent process exited');
}, 500).unref();

/** Starts a service once the services it names in `after` are settled (healthy or failed). */
const settled = new Map<string, Promise<boolean>>();
function launch(service: SupervisedService): Promise<boolean> {
  const existing = settled.get(service.spec.name);
  if (existing) return existing;
  const run = (async () => {
    for (const dependency of service.spec.after) {
      const dep = byName.get(dependency);
      if (dep) await launch(dep);
    }
    if (stopping) return false;
    say(`starting ${service.spec.name}`);
    service.start();
    void service.whenExited().then(() => {
      if (!stopping)
        say(`${service.spec.name} exited unexpectedly (${service.failure}); the others keep running`);
    });
    const ok = await service.waitHealthy(healthTimeoutMs);
    say(ok ? `${service.spec.name} is healthy` : `${service.spec.name} FAILED: ${service.failure}`);
    return ok;
  })();
  settled.set(service.spec.name, run);
  return run;
}

function demoKeyLines(): string[] {
  const file = join(cwd, 'data/exchange/demo-api-key.json');
  if (byName.get('exchange')?.state !== 'healthy' || !existsSync(file)) return [];
  try {
    const key = JSON.parse(readFileSync(file, 'utf8')) as { apiKey?: string; apiSecret?: string };
    return [
      '',
      `exchange demo API key:    ${key.apiKey ?? '?'}`,
      `exchange demo API secret: ${key.apiSecret ?? '?'}`,
    ];
  } catch {
    return ['', `exchange demo API key: unreadable ${file}`];
  }
}

const results = await Promise.all(services.map(launch));
if (!stopping) {
  out.write(`\n${renderTable(services, demoKeyLines())}\n\n`);
  const healthy = results.filter(Boolean).length;
  say(`${healthy} of ${services.length} service(s) running. Press Ctrl-C to stop.`);
  if (healthy === 0) await stopAll('no healthy service');
}
