import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { afterAll, describe, expect, it } from 'vitest';
import { clientSignV3, nextNonce } from '../support/signing.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
// Inside the repository so `--import tsx` resolves; `.tmp/` is git-ignored.
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'server-'));
// The embedded default: whatever the test environment sets, the process sees no storage settings.
const env = {
  DATABASE_URL: '',
  MASTER_KEY: '',
  MASTER_KEY_FILE: '',
  DATA_DIR: '',
  SEED_DEMO: '',
  LOG_LEVEL: 'warn',
};

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function wallets(url: string, apiKey: string, apiSecret: string): Promise<unknown[][]> {
  const nonce = nextNonce();
  const response = await fetch(`${url}/v3/auth/r/wallets`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'svc-nonce': nonce,
      'svc-apikey': apiKey,
      'svc-signature': clientSignV3(apiSecret, '/v3/auth/r/wallets', nonce, '{}'),
    },
    body: '{}',
  });
  expect(response.status).toBe(200);
  return (await response.json()) as unknown[][];
}

describe('server process on the embedded default', () => {
  it('seeds the demo account once, writes its key file and keeps both across restarts', async () => {
    const first = await startServiceProcess({ name: 'exchange', entry, cwd, env, healthPath: '/health' });
    const keyFile = path.join(cwd, 'data/exchange/demo-api-key.json');
    let demo: { apiKey: string; apiSecret: string };
    try {
      demo = JSON.parse(readFileSync(keyFile, 'utf8'));
      expect(Object.keys(demo).sort()).toEqual(['apiKey', 'apiSecret']);
      expect(statSync(path.join(cwd, 'data/exchange/master.key')).mode & 0o777).toBe(0o600);
      expect(await wallets(first.url, demo.apiKey, demo.apiSecret)).toContainEqual([
        'exchange',
        'BTC',
        2.5,
        null,
        2.5,
      ]);
      // The operator tool must not open the embedded database while the server has it.
      const cliEntry = path.join(serviceDir, 'src/cli.ts');
      const cli = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, 'account', 'list'], {
        cwd,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      expect(cli.status).toBe(2);
      expect(cli.stderr).toMatch(/in use by process \d+/);
    } finally {
      await first.stop();
    }
    expect(first.isRunning()).toBe(false);
    const second = await startServiceProcess({ name: 'exchange', entry, cwd, env, healthPath: '/health' });
    try {
      expect(JSON.parse(readFileSync(keyFile, 'utf8'))).toEqual(demo);
      expect(await wallets(second.url, demo.apiKey, demo.apiSecret)).toContainEqual([
        'exchange',
        'BTC',
        2.5,
        null,
        2.5,
      ]);
    } finally {
      await second.stop();
    }
  }, 90_000);
});
