import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { resolveFormat } from '@platform/logging/logger';
import { LogSettingError, parseLogSettings } from '@platform/logging/settings';
import { releaseLock } from '@platform/sql-storage/process-lock';
import { buildProjects } from './build/build.js';
import { isStale } from './build/freshness.js';
import { type BuildProject, readProject } from './build/project.js';
import { discoverServices, type ServiceSpec } from './discover.js';
import type { LaunchMode } from './launch-mode.js';
import { jsonOutput, prettyOutput } from './output.js';
import { alreadyRunning, claimInstance, instanceLockFile } from './preflight.js';
import { listenerSettingRefusal, platformDataRoot, serviceEnvironment } from './service-env.js';
import { SupervisedService } from './supervisor.js';
import { renderTable } from './table.js';

/**
 * `npm start`: runs every service that exists on its embedded defaults, each in its own process,
 * from its compiled output (`dist/`, built first when missing or older than the sources of the
 * service or of a package it uses). `npm run dev` (`--dev`) runs the sources under `tsx watch` instead.
 *
 * Flags: `--only a,b` starts a subset; `--services-dir` and `--cwd` point it elsewhere (tests);
 * `--health-timeout` in seconds (default 60); `--grace` seconds before SIGKILL on stop (default 10);
 * `--dev` runs every service from its sources under `tsx watch` (no build).
 *
 * `LOG_FORMAT` and `LOG_LEVEL` mean what they mean in every service: on a terminal (or with
 * `LOG_FORMAT=pretty`) each service writes readable lines that the launcher prefixes with its name;
 * otherwise everything, the launcher's own messages included, is one stream of JSON lines.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    'services-dir': { type: 'string' },
    cwd: { type: 'string' },
    'health-timeout': { type: 'string', default: '60' },
    grace: { type: 'string', default: '10' },
    dev: { type: 'boolean', default: false },
  },
});

const out = process.stdout;
let logSettings: ReturnType<typeof parseLogSettings>;
try {
  logSettings = parseLogSettings(process.env);
} catch (error) {
  if (!(error instanceof LogSettingError)) throw error;
  out.write(`launcher | ${error.message}\n`);
  process.exit(2);
}
const format = resolveFormat(logSettings.format, out);
let output =
  format === 'json' ? jsonOutput(out, logSettings.level) : prettyOutput(out, 'launcher'.length, false);
const say = (line: string): void => output.say(line);

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

const listenerRefusal = listenerSettingRefusal(process.env);
if (listenerRefusal) {
  say(listenerRefusal);
  process.exit(2);
}

// A second `npm start` (or a service already started on its own) is refused before anything starts,
// with one line naming the running instance and a non-zero exit (`preflight.ts`).
const instanceRefusal = claimInstance(cwd);
const dataRoot = platformDataRoot(process.env, cwd);
const preflightRefusal = instanceRefusal ?? (await alreadyRunning(specs, dataRoot));
if (preflightRefusal) {
  if (!instanceRefusal) releaseLock(instanceLockFile(cwd));
  say(preflightRefusal);
  process.exit(2);
}
process.on('exit', () => releaseLock(instanceLockFile(cwd)));

/** Compiles the services whose output is stale (one tsc run); a failed build stops the launcher. */
async function buildStale(compilable: ServiceSpec[]): Promise<void> {
  const seen = new Map<string, BuildProject>();
  const stale = compilable.map((spec) => readProject(spec.dir, seen)).filter(isStale);
  if (stale.length === 0) return;
  const relative = (p: BuildProject): string => p.dir.replace(`${repoRoot}/`, '');
  // A fresh checkout compiles everything once (a minute or so): say so before the wait.
  say(`compiling ${stale.map(relative).join(', ')} (output missing or older than the sources)...`);
  const started = Date.now();
  const result = await buildProjects(stale, { onlyStale: false });
  if (!result.ok) {
    out.write(result.output);
    say('build failed (tsc output above): fix it, or run the sources with `npm run dev`');
    process.exit(1);
  }
  say(`built ${result.built.map(relative).join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const modeOf = (spec: ServiceSpec): LaunchMode =>
  values.dev ? 'watch' : spec.compilable ? 'compiled' : 'tsx';
if (!values.dev) await buildStale(specs.filter((s) => s.compilable));

const prefixWidth = Math.max('launcher'.length, ...specs.map((s) => s.name.length));
const color = logSettings.color ?? out.isTTY === true;
if (format === 'pretty') output = prettyOutput(out, prefixWidth, color);
// The services write the launcher's format; their output is a pipe, so colour is asked for explicitly.
const serviceEnv: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: format };
if (format === 'pretty' && color) serviceEnv.FORCE_COLOR = '1';
const services = specs.map(
  (spec, index) =>
    new SupervisedService(spec, {
      cwd,
      index,
      env: serviceEnvironment(serviceEnv, spec, dataRoot),
      output,
      mode: modeOf(spec),
    }),
);
const byName = new Map(services.map((s) => [s.spec.name, s]));

let stopping = false;
let stoppingSince = 0;
// Ctrl-C in a terminal reaches the launcher twice: from the terminal (the whole foreground process
// group) and from npm, which passes the signal on to its child. A second signal this soon after the
// first is that same keypress, not a request to hurry.
const SAME_KEYPRESS_MS = 1000;
async function stopAll(signal: string): Promise<void> {
  if (stopping) {
    // The parent going away while we stop is expected (a SIGTERM to the whole process group reaches
    // npm and its shell too): keep stopping in order. Only a later second signal means "now".
    if (signal === 'parent process exited' || Date.now() - stoppingSince < SAME_KEYPRESS_MS) return;
    say(`${signal} again: killing everything now`);
    // The services run in process groups of their own: exiting alone would leave them running.
    for (const service of services) service.kill();
    process.exit(130);
  }
  stopping = true;
  stoppingSince = Date.now();
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
    say(`starting ${service.spec.name} (${service.options.mode})`);
    service.start();
    void service.whenExited().then(() => {
      if (!stopping)
        say(`${service.spec.name} exited unexpectedly (${service.failure}); the others keep running`);
    });
    const ok = await service.waitHealthy(healthTimeoutMs);
    if (ok) say(`${service.spec.name} is healthy`);
    else if (service.state === 'slow')
      say(`${service.spec.name} is not healthy yet after ${healthTimeoutMs / 1000} s; still waiting for it`);
    else say(`${service.spec.name} FAILED: ${service.failure}`);
    return ok;
  })();
  settled.set(service.spec.name, run);
  return run;
}

/**
 * The demo API key and secret, for the summary table. The secret is shown only to a terminal: it
 * is never a log line (logs are shipped and kept); elsewhere the line names the key file (mode 0600).
 */
function demoKeyLines(): string[] {
  if (byName.get('exchange')?.state !== 'healthy') return [];
  return demoKeyLinesOfHealthyExchange();
}

function demoKeyLinesOfHealthyExchange(): string[] {
  // Both demo accounts (a trade needs two: self-trade prevention cancels an account's own order).
  const accounts = [
    { who: 'demo@example.com', file: join(dataRoot, 'exchange/demo-api-key.json') },
    { who: 'demo2@example.com', file: join(dataRoot, 'exchange/demo2-api-key.json') },
  ].filter((account) => existsSync(account.file));
  if (accounts.length === 0) return [];
  const lines = [''];
  for (const { who, file } of accounts) {
    if (!out.isTTY) {
      lines.push(`exchange ${who} API key and secret: ${file}`);
      continue;
    }
    try {
      const key = JSON.parse(readFileSync(file, 'utf8')) as { apiKey?: string; apiSecret?: string };
      lines.push(`exchange ${who} API key:    ${key.apiKey ?? '?'}`);
      lines.push(`exchange ${who} API secret: ${key.apiSecret ?? '?'}`);
    } catch {
      lines.push(`exchange ${who} API key: unreadable ${file}`);
    }
  }
  lines.push("signed call: npm run -s call -w services/exchange -- POST /v3/auth/r/wallets '{}'");
  if (byName.get('paygate')?.state === 'healthy') {
    lines.push(
      'hosted payment page test: npm run -s try-invoice -w services/paygate -- 500 UAH (prints its address)',
    );
  }
  return lines;
}

const results = await Promise.all(services.map(launch));
if (!stopping) {
  output.forPeople(`\n${renderTable(services, demoKeyLines())}\n\n`);
  for (const service of services) {
    if (output.format === 'json')
      output.say(`${service.spec.name} ${service.state}`, { state: service.state, urls: service.spec.urls });
  }
  const healthy = results.filter(Boolean).length;
  const slow = services.filter((service) => service.state === 'slow');
  const waiting =
    slow.length > 0 ? `, ${slow.length} still starting (${slow.map((s) => s.spec.name).join(', ')})` : '';
  say(`${healthy} of ${services.length} service(s) running${waiting}. Press Ctrl-C to stop.`);
  if (healthy === 0 && slow.length === 0) await stopAll('no healthy service');
  // A service slower than --health-timeout (a first start on a loaded machine) is still waited for:
  // one line when it becomes healthy (the exchange's with the demo keys the table could not show).
  const started = Date.now();
  for (const service of slow) {
    void service.waitHealthy(Number.POSITIVE_INFINITY).then((ok) => {
      if (!ok || stopping) return;
      const seconds = Math.round((healthTimeoutMs + Date.now() - started) / 1000);
      say(`${service.spec.name} is healthy (after about ${seconds} s)`);
      if (service.spec.name === 'exchange') {
        const lines = demoKeyLinesOfHealthyExchange();
        if (lines.length > 0) output.forPeople(`${lines.join('\n')}\n\n`);
      }
    });
  }
}
