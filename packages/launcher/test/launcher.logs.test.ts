import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

// A service that writes one JSON log line (as the platform's services do off a terminal), one plain
// line and one line on standard error, and reports the LOG_FORMAT it was given.
// It binds port 0 and announces its port to `portFile`, where the test's front picks it up.
const server = (portFile: string) => `
import { createServer } from 'node:http';
const s = createServer((req, res) => { res.end('ok'); });
s.listen(0, '127.0.0.1', () => {
  ${announcePort('s', portFile)}
  console.log(JSON.stringify({ level: 30, service: 'beta', msg: 'listening', format: process.env.LOG_FORMAT }));
  console.log('a plain line');
  console.error('an error line');
});
process.on('SIGTERM', () => s.close(() => process.exit(0)));
`;

describe('launcher output off a terminal', () => {
  it('is one stream of JSON lines: the services lines unchanged, the rest wrapped, its own too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'launcher-json-'));
    const front = await serviceFront(join(dir, 'beta.port'));
    const port = front.port;
    mkdirSync(join(dir, 'beta/src'), { recursive: true });
    writeFileSync(
      join(dir, 'beta/package.json'),
      JSON.stringify({
        name: 'beta',
        platform: { order: 1, health: `http://127.0.0.1:${port}/health`, urls: {} },
      }),
    );
    writeFileSync(join(dir, 'beta/src/server.ts'), server(join(dir, 'beta.port')));
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.LOG_FORMAT;
    const launcher = spawn(
      process.execPath,
      ['--import', 'tsx', launcherEntry, '--services-dir', dir, '--cwd', dir],
      {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    launcher.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      const deadline = Date.now() + 80_000;
      while (
        !(output.includes('Press Ctrl-C') && output.includes('an error line')) &&
        Date.now() < deadline
      ) {
        if (launcher.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      if (launcher.exitCode === null) {
        const exited = new Promise((r) => launcher.once('exit', r));
        launcher.kill('SIGTERM');
        await exited;
      }
      await front.close();
    }
    const lines = output.split('\n').filter((line) => line.length > 0);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toContainEqual({ level: 30, service: 'beta', msg: 'listening', format: 'json' });
    expect(records).toContainEqual(
      expect.objectContaining({ service: 'beta', level: 30, msg: 'a plain line' }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ service: 'beta', level: 50, msg: 'an error line' }),
    );
    expect(records).toContainEqual(expect.objectContaining({ service: 'launcher', msg: 'beta is healthy' }));
    expect(output).not.toMatch(/service\s+status\s+where/);
    // The launcher and its service start under tsx: slow on a loaded machine.
  }, 100_000);
});
