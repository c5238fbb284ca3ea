import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

// The fake exchange starts listening only when the test says so: slower than --health-timeout, as a
// first start on a loaded machine is. It is not a failure: the table says it is still starting, and
// the launcher says when it becomes healthy, with the demo key lines the table could not show.
it('a service slower than --health-timeout is still starting, not FAILED; once healthy the demo key files and the signing tool are named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'launcher-table-'));
  const front = await serviceFront(join(dir, 'exchange.port'));
  mkdirSync(join(dir, 'exchange/src'), { recursive: true });
  writeFileSync(
    join(dir, 'exchange/package.json'),
    JSON.stringify({
      name: 'exchange',
      platform: { order: 1, health: `http://127.0.0.1:${front.port}/health`, urls: {} },
    }),
  );
  writeFileSync(
    join(dir, 'exchange/src/server.ts'),
    `import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
const server = createServer((req, res) => res.end('ok'));
const start = () => existsSync(${JSON.stringify(join(dir, 'go'))})
  ? server.listen(0, '127.0.0.1', () => { ${announcePort('server', join(dir, 'exchange.port'))} })
  : setTimeout(start, 50);
start();
process.on('SIGTERM', () => (server.listening ? server.close(() => process.exit(0)) : process.exit(0)));
`,
  );
  mkdirSync(join(dir, 'data/exchange'), { recursive: true });
  for (const file of ['demo-api-key.json', 'demo2-api-key.json'])
    writeFileSync(join(dir, 'data/exchange', file), JSON.stringify({ apiKey: 'k', apiSecret: 's' }));
  const launcher = spawn(
    process.execPath,
    ['--import', 'tsx', launcherEntry, '--services-dir', dir, '--cwd', dir, '--health-timeout', '1'],
    {
      cwd: repoRoot,
      env: { ...process.env, LOG_FORMAT: 'pretty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  launcher.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    const until = async (text: string) => {
      const deadline = Date.now() + 90_000;
      while (!output.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    };
    await until('Press Ctrl-C');
    expect(output).toMatch(/exchange\s+still starting: not healthy after 1 s \(.*\); waiting on/);
    expect(output).not.toContain('FAILED');
    expect(output).toContain('0 of 1 service(s) running, 1 still starting (exchange). Press Ctrl-C to stop.');
    expect(output).not.toContain('API key and secret');
    writeFileSync(join(dir, 'go'), '');
    await until('npm run -s call');
    expect(output).toMatch(/exchange is healthy \(after about \d+ s\)/);
    expect(output).toContain(
      `exchange demo@example.com API key and secret: ${join(dir, 'data/exchange/demo-api-key.json')}`,
    );
    expect(output).toContain(
      `exchange demo2@example.com API key and secret: ${join(dir, 'data/exchange/demo2-api-key.json')}`,
    );
    expect(output).toContain('npm run -s call -w services/exchange');
  } finally {
    const exited = new Promise((r) => launcher.once('exit', r));
    launcher.kill('SIGTERM');
    await exited;
    await front.close();
  }
}, 150_000);
