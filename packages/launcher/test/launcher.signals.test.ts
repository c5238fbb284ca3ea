import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { until } from '@platform/testkit/wait';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from './alive.js';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

interface Started {
  readonly launcher: ChildProcess;
  readonly servicePid: number;
  output(): string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The launcher with one service whose SIGTERM handler is `onTerm` (source), started and healthy. */
async function startLauncher(onTerm: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'launcher-signals-'));
  const portFile = join(dir, 'solo.port');
  const front = await serviceFront(portFile);
  cleanups.push(() => front.close());
  mkdirSync(join(dir, 'solo', 'src'), { recursive: true });
  writeFileSync(
    join(dir, 'solo', 'package.json'),
    JSON.stringify({
      name: 'solo',
      platform: { order: 1, health: `http://127.0.0.1:${front.port}/`, urls: {} },
    }),
  );
  writeFileSync(
    join(dir, 'solo', 'src/server.ts'),
    `import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(join(dir, 'solo.pid'))}, String(process.pid));
const server = createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => { ${announcePort('server', portFile)} });
process.on('SIGTERM', () => { ${onTerm} });
`,
  );
  const launcher = spawn(
    process.execPath,
    ['--import', 'tsx', launcherEntry, '--services-dir', dir, '--cwd', dir, '--grace', '30'],
    { cwd: repoRoot, env: { ...process.env, LOG_FORMAT: 'pretty' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  launcher.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cleanups.push(() => {
    if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGKILL');
  });
  await until('the launcher to start its service', () => output.includes('Press Ctrl-C'), 40_000, 100);
  const servicePid = Number(readFileSync(join(dir, 'solo.pid'), 'utf8'));
  cleanups.push(() => {
    if (alive(servicePid)) process.kill(servicePid, 'SIGKILL');
  });
  return { launcher, servicePid, output: () => output };
}

describe('npm start launcher and Ctrl-C', () => {
  it('SIGINT twice at once (the terminal and npm passing it on) is one Ctrl-C: the services stop gracefully', async () => {
    // The service takes a moment to stop, so the second signal arrives while the launcher stops.
    const started = await startLauncher('setTimeout(() => process.exit(0), 500);');
    const exited = once(started.launcher, 'exit');
    started.launcher.kill('SIGINT');
    await sleep(20);
    started.launcher.kill('SIGINT');
    const [code] = (await exited) as [number | null];
    expect(code, started.output()).toBe(0);
    expect(started.output()).toContain('all services stopped');
    expect(started.output()).not.toContain('killing everything now');
    expect(alive(started.servicePid)).toBe(false);
  }, 60_000);

  it('a second SIGINT later kills every service at once, one that ignores SIGTERM included', async () => {
    const started = await startLauncher('/* ignored: stops only when killed */');
    const exited = once(started.launcher, 'exit');
    started.launcher.kill('SIGINT');
    await sleep(1500);
    expect(alive(started.servicePid)).toBe(true);
    started.launcher.kill('SIGINT');
    const [code] = (await exited) as [number | null];
    expect(code, started.output()).toBe(130);
    expect(started.output()).toContain('SIGINT again: killing everything now');
    await until('the service to be gone', () => !alive(started.servicePid), 5_000);
  }, 60_000);
});
