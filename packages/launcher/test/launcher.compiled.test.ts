import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');
// Inside the repository (`.tmp/` is git-ignored) so the shared compiler options and @types/node resolve.
mkdirSync(join(repoRoot, '.tmp'), { recursive: true });
const servicesDir = mkdtempSync(join(repoRoot, '.tmp/launcher-compiled-'));

/** Runs the launcher until its summary (or its exit), then stops it; returns what it printed. */
async function launchOnce(env: NodeJS.ProcessEnv, healthTimeoutSeconds: number): Promise<string> {
  const launcher: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      launcherEntry,
      '--services-dir',
      servicesDir,
      '--cwd',
      servicesDir,
      '--health-timeout',
      String(healthTimeoutSeconds),
    ],
    { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  launcher.stdout?.on('data', collect);
  launcher.stderr?.on('data', collect);
  const exited = new Promise<void>((r) => launcher.once('exit', () => r()));
  const deadline = Date.now() + 120_000;
  while (!output.includes('Press Ctrl-C') && launcher.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  launcher.kill('SIGTERM');
  await exited;
  return output;
}

describe('npm start launcher with a compilable service', () => {
  afterAll(() => rmSync(servicesDir, { recursive: true, force: true }));

  // Compiles once and starts the launcher twice: minutes on a loaded 2-core machine.
  it('builds the missing output, runs dist/ with source maps, and skips the build when fresh', {
    timeout: 240_000,
  }, async () => {
    const dir = join(servicesDir, 'gamma');
    const portFile = join(servicesDir, 'gamma.port');
    const front = await serviceFront(portFile);
    const port = front.port;
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'gamma',
        type: 'module',
        platform: { order: 1, health: `http://127.0.0.1:${port}/`, urls: {} },
      }),
    );
    writeFileSync(
      join(dir, 'tsconfig.build.json'),
      JSON.stringify({ extends: join(repoRoot, 'tsconfig.build.base.json') }),
    );
    writeFileSync(
      join(dir, 'src/server.ts'),
      `import { createServer } from 'node:http';
const flags: string[] = process.execArgv;
const server = createServer((_req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  if (process.env.ANNOUNCE_PORT === 'yes') ${announcePort('server', portFile)}
  console.log('gamma runs ' + process.argv[1] + ' with ' + flags.join(' '));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
    );

    const first = await launchOnce({ ANNOUNCE_PORT: 'yes' }, 60).finally(() => front.close());
    // Not a terminal, so the launcher writes JSON lines (its own messages as `msg`).
    expect(first).toMatch(/"msg":"built [^"]*gamma/);
    expect(first).toContain('starting gamma (compiled)');
    expect(first).toContain(
      `gamma runs ${join(dir, 'dist/server.js')} with --enable-source-maps --conditions=platform-compiled`,
    );
    expect(first).toContain('1 of 1 service(s) running');

    // Only the build decision matters the second time: the front is closed, so the service (on a
    // port of its own, not announced) is left to fail its health check.
    const second = await launchOnce({}, 1);
    expect(second).toContain('starting gamma (compiled)');
    expect(second).not.toMatch(/"msg":"built /);
    expect(second).toMatch(/gamma runs .*dist\/server\.js/);
  });
});
