import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../src/db/open.js';
import { cliEntry, embeddedEnv, startExchangeProcess, useServerFolder } from '../support/server-process.js';
import { clientSignV2, clientSignV3, nextNonce } from '../support/signing.js';

const cwd = useServerFolder('server-');
// The embedded default: whatever the test environment sets, the process sees no storage settings.
const env = embeddedEnv(cwd);

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
    // A first start on the embedded database runs initdb and every migration: on a loaded 2-core CI
    // machine that took over 60 s once (2 Dec 2026).
    const first = await startExchangeProcess(cwd, env, { timeoutMs: 150_000 });
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
      // No second process opens the embedded database while the server has it (its lock file
      // refuses); the operator tool's commands go to the server instead, which runs them on it.
      await expect(
        openStorage({ kind: 'pglite', dataDir: path.join(cwd, 'data/exchange/pgdata') }),
      ).rejects.toThrow(/in use by process \d+/);
      const cli = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, 'account', 'list'], {
        cwd,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      expect(cli.stderr).toBe('');
      expect(cli.status).toBe(0);
      expect(JSON.parse(cli.stdout)).toContainEqual(expect.objectContaining({ email: 'demo@example.com' }));
    } finally {
      await first.stop();
    }
    expect(first.isRunning()).toBe(false);
    const second = await startExchangeProcess(cwd, env, { timeoutMs: 120_000 });
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
  }, 300_000);

  it('new user: the two seeded demo accounts trade through v2 and see it in v3', async () => {
    const server = await startExchangeProcess(cwd, env);
    try {
      const key = (file: string) => JSON.parse(readFileSync(path.join(cwd, 'data/exchange', file), 'utf8'));
      const buyer = key('demo-api-key.json');
      const seller = key('demo2-api-key.json');
      const order = async (who: { apiKey: string; apiSecret: string }, params: Record<string, string>) => {
        const all = { ...params, access_key: who.apiKey, tonce: nextNonce() };
        const body = new URLSearchParams({
          ...all,
          signature: clientSignV2(who.apiSecret, 'POST', '/api/v2/orders.json', all),
        });
        const response = await fetch(`${server.url}/api/v2/orders.json`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        expect(response.status).toBe(201);
        return (await response.json()) as { id: number; state: string };
      };
      const buy = await order(buyer, { market: 'ethuah', side: 'buy', volume: '1', price: '80000' });
      const sell = await order(seller, { market: 'ethuah', side: 'sell', volume: '1', price: '79000' });
      expect([buy.state, sell.state]).toEqual(['wait', 'done']);
      const apiPath = `/v3/auth/r/order/ethuah:${buy.id}/trades`;
      const nonce = nextNonce();
      const trades = await fetch(`${server.url}${apiPath}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'svc-nonce': nonce,
          'svc-apikey': buyer.apiKey,
          'svc-signature': clientSignV3(buyer.apiSecret, apiPath, nonce, '{}'),
        },
        body: '{}',
      });
      expect(await trades.json()).toEqual([
        [
          expect.any(Number),
          'ethuah',
          expect.any(Number),
          buy.id,
          '1',
          '80000',
          null,
          null,
          1,
          '0.001',
          'eth',
        ],
      ]);
      const book = await (await fetch(`${server.url}/v3/book/ethuah`)).json();
      expect(book).toEqual([]);
      const [ticker] = (await (await fetch(`${server.url}/v3/tickers?symbols=ethuah`)).json()) as unknown[][];
      expect(ticker?.[7]).toBe(80000);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
