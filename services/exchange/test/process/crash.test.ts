import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, describe, expect, it } from 'vitest';
import { clientSignV2, nextNonce } from '../support/signing.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'crash-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const database = useTestDatabase('exchange_crash');

/** The node process under the testkit's watchdog shell. */
function serverPid(watchdog: number): number {
  const out = execFileSync('pgrep', ['-P', String(watchdog)], { encoding: 'utf8' }).trim();
  return Number(out.split('\n')[0]);
}

describe('crash durability (real process, PostgreSQL)', () => {
  it('keeps every acknowledged order and the book after SIGKILL, and rebuilds the same book', async () => {
    const env = {
      DATABASE_URL: database.url,
      MASTER_KEY: 'ab'.repeat(32),
      MASTER_KEY_FILE: '',
      DATA_DIR: path.join(cwd, 'data'),
      SEED_DEMO: 'true',
      LOG_LEVEL: 'warn',
    };
    const first = await startServiceProcess({ name: 'exchange', entry, cwd, env, healthPath: '/health' });
    const demo = JSON.parse(readFileSync(path.join(cwd, 'data/demo-api-key.json'), 'utf8'));
    const post = (url: string, params: Record<string, string>) => {
      const all = { ...params, access_key: demo.apiKey, tonce: nextNonce() };
      const body = new URLSearchParams({
        ...all,
        signature: clientSignV2(demo.apiSecret, 'POST', '/api/v2/orders', all),
      });
      return fetch(`${url}/api/v2/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    };
    const acked: number[] = [];
    let bookBefore: unknown;
    try {
      // One key: its tonces must arrive in order, so the requests go one after the other.
      for (let i = 0; i < 30; i += 1) {
        const response = await post(first.url, {
          market: 'btcuah',
          side: i % 2 === 0 ? 'buy' : 'sell',
          volume: '0.01',
          price: String(i % 2 === 0 ? 1_000_000 + (i % 5) * 1000 : 2_000_000 + (i % 5) * 1000),
        });
        expect(response.status).toBe(201);
        acked.push(((await response.json()) as { id: number }).id);
      }
      bookBefore = await (await fetch(`${first.url}/v3/book/btcuah`)).json();
      process.kill(serverPid(first.pid!), 'SIGKILL');
    } finally {
      await first.stop();
    }
    const second = await startServiceProcess({ name: 'exchange', entry, cwd, env, healthPath: '/health' });
    try {
      expect(await (await fetch(`${second.url}/v3/book/btcuah`)).json()).toEqual(bookBefore);
      const params = { market: 'btcuah', limit: '1000', access_key: demo.apiKey, tonce: nextNonce() };
      const query = new URLSearchParams({
        ...params,
        signature: clientSignV2(demo.apiSecret, 'GET', '/api/v2/orders', params),
      });
      const open = (await (await fetch(`${second.url}/api/v2/orders?${query}`)).json()) as { id: number }[];
      expect(open.map((o) => o.id).sort((a, b) => a - b)).toEqual([...acked].sort((a, b) => a - b));
    } finally {
      await second.stop();
    }
  });
});
