import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentHolder } from '@platform/sql-storage/process-lock';
import { describe, expect, it } from 'vitest';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

function writeService(root: string, name: string, platform: object, source: string): void {
  mkdirSync(join(root, name, 'src'), { recursive: true });
  writeFileSync(join(root, name, 'package.json'), JSON.stringify({ name, platform }));
  writeFileSync(join(root, name, 'src/server.ts'), source);
}

function collect(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return () => output;
}

function runLauncher(dir: string): Promise<{ code: number | null; output: string }> {
  const launcher = spawn(
    process.execPath,
    ['--import', 'tsx', launcherEntry, '--services-dir', dir, '--cwd', dir, '--health-timeout', '20'],
    { cwd: repoRoot, env: { ...process.env, LOG_FORMAT: 'pretty' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output = collect(launcher);
  return new Promise((r) => launcher.once('exit', (code) => r({ code, output: output() })));
}

describe('a second npm start', () => {
  it('is refused with one line naming the running launcher, and exits non-zero', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'launcher-twice-'));
    writeService(
      dir,
      'solo',
      { order: 1, health: 'http://127.0.0.1:1/health', urls: {} },
      'setInterval(() => {}, 1000);',
    );
    // This test process plays the first instance: its pid and start time in the instance lock.
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data/launcher.pid'), JSON.stringify(currentHolder()));
    const { code, output } = await runLauncher(dir);
    expect(code).toBe(2);
    expect(output).toContain(
      `the platform is already running from ${dir} (npm start, process ${process.pid})`,
    );
    expect(output).not.toContain('starting solo');
    expect(output).not.toContain('running. Press Ctrl-C');
  }, 120_000);

  it('is refused when a service already answers its health URL (started on its own)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'launcher-taken-'));
    const running = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => running.listen(0, '127.0.0.1', r));
    const port = (running.address() as AddressInfo).port;
    writeService(
      dir,
      'solo',
      { order: 1, health: `http://127.0.0.1:${port}/health`, urls: {} },
      'setInterval(() => {}, 1000);',
    );
    try {
      const { code, output } = await runLauncher(dir);
      expect(code).toBe(2);
      expect(output).toContain(`http://127.0.0.1:${port}/health already answers: solo is already running`);
      expect(output).not.toContain('starting solo');
    } finally {
      running.close();
    }
  }, 120_000);
});

describe('SIGTERM to the process group of npm start', () => {
  it('stops the services in order without "killing everything now"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'launcher-group-'));
    const front = await serviceFront(join(dir, 'slow.port'));
    // A service that takes a while to stop, so the shell above the launcher is gone meanwhile.
    writeService(
      dir,
      'slow',
      { order: 1, health: `http://127.0.0.1:${front.port}/health`, urls: {} },
      `import { createServer } from 'node:http';
const server = createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  ${announcePort('server', join(dir, 'slow.port'))}
});
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 2500));
`,
    );
    const command = `"${process.execPath}" --import tsx ${launcherEntry} --services-dir ${dir} --cwd ${dir}`;
    // As npm runs a script: a shell above the launcher, all in one process group of their own.
    const shell = spawn('/bin/sh', ['-c', `${command}; true`], {
      cwd: repoRoot,
      env: { ...process.env, LOG_FORMAT: 'pretty' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const output = collect(shell);
    try {
      const deadline = Date.now() + 90_000;
      while (!output().includes('Press Ctrl-C') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(output()).toContain('1 of 1 service(s) running');
      process.kill(-shell.pid!, 'SIGTERM');
      const stopDeadline = Date.now() + 30_000;
      while (!output().includes('all services stopped') && Date.now() < stopDeadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(output()).toContain('all services stopped');
      expect(output()).not.toContain('killing everything now');
    } finally {
      try {
        process.kill(-shell.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await front.close();
    }
  }, 150_000);
});
