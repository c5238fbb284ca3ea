import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { announcePort, serviceFront } from './service-front.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

it('the table names both demo accounts key files and the signing tool once the exchange is healthy', async () => {
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
const server = createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => { ${announcePort('server', join(dir, 'exchange.port'))} });
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
  );
  mkdirSync(join(dir, 'data/exchange'), { recursive: true });
  for (const file of ['demo-api-key.json', 'demo2-api-key.json'])
    writeFileSync(join(dir, 'data/exchange', file), JSON.stringify({ apiKey: 'k', apiSecret: 's' }));
  const launcher = spawn(
    process.execPath,
    ['--import', 'tsx', launcherEntry, '--services-dir', dir, '--cwd', dir],
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
    const deadline = Date.now() + 90_000;
    while (!output.includes('Press Ctrl-C') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
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
