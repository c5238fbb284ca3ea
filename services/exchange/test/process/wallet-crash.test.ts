import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { type Litecoind, startLitecoind } from '@platform/testkit/litecoind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { credit } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { reference } from '../support/targets.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'wallet-crash-'));
const database = useTestDatabase('exchange_wallet_crash');
const MASTER_KEY = 'cd'.repeat(32);
let node: Litecoind;
let db: Database;

beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(101);
  await node.rpc('createwallet', ['exchange']);
  const hot = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'exchange');
  await node.rpc('sendtoaddress', [hot, '20'], 'miner');
  await node.mine(1);
  db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
  await syncCurrencies(db, reference);
}, 120_000);
afterAll(async () => {
  await db?.close();
  await node?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

async function sendsTagged(tag: string): Promise<string[]> {
  const txs = await node.rpc<{ category: string; comment?: string; txid: string }[]>(
    'listtransactions',
    ['*', 1000, 0],
    'exchange',
  );
  return txs.filter((tx) => tx.category === 'send' && tx.comment === tag).map((tx) => tx.txid);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('withdrawal crash safety (real process, litecoind, PostgreSQL)', () => {
  it('after SIGKILL between the node send and the commit, finds the transaction by its tag instead of sending again', async () => {
    const account = await db.transaction((tx) => createAccount(tx, { email: 'crash@example.com' }));
    const box = createSecretBox(Buffer.from(MASTER_KEY, 'hex'));
    const { key, secret } = await issueApiKey(db, box, account.id, ['read', 'withdraw']);
    await credit(db, account.id, 'ltc', 10n ** 8n);
    const env = {
      DATABASE_URL: database.url,
      MASTER_KEY,
      MASTER_KEY_FILE: '',
      DATA_DIR: path.join(cwd, 'data'),
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      CUSTODY_NODE_LTC_URL: node.url,
      WALLET_POLL_MS: '100',
      WITHDRAWAL_SEND_LEASE_MS: '0',
    };
    // The documented fail point: SIGKILL right after the node accepted the send, before our commit.
    const first = await startServiceProcess({
      sandboxSecrets: true,
      name: 'exchange',
      entry,
      cwd,
      env: { ...env, EXCHANGE_FAILPOINT: 'withdrawal-after-send' },
      port: 0,
      healthPath: '/health',
    });
    const to = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'miner');
    const body = JSON.stringify({ withdraw_type: 'ltc', amount: '0.25', address: to });
    const response = await fetch(`${first.url}/v3/auth/withdraw`, {
      method: 'POST',
      headers: v3Headers(key.publicKey, secret, '/v3/auth/withdraw', body),
      body,
    });
    expect(response.status).toBe(200);
    const [{ withdrawal_id: id }] = (await response.json()) as [{ withdrawal_id: number }];
    await until('the server to be killed', async () => (first.isRunning() ? undefined : true));
    const { rows } = await db.query<{ status: string; tag: string; external_id: string | null }>(
      'SELECT status, tag, external_id FROM withdrawals WHERE id = $1',
      [id],
    );
    expect(rows[0]).toMatchObject({ status: 'sending', external_id: null });
    const tag = rows[0]!.tag;
    const [sentTxid] = await sendsTagged(tag);
    expect(await sendsTagged(tag)).toHaveLength(1);

    const second = await startServiceProcess({
      sandboxSecrets: true,
      name: 'exchange',
      entry,
      cwd,
      env,
      port: 0,
      healthPath: '/health',
    });
    try {
      const txid = await until('the withdrawal to be taken up again', async () => {
        const found = await db.query<{ status: string; external_id: string | null }>(
          'SELECT status, external_id FROM withdrawals WHERE id = $1',
          [id],
        );
        return found.rows[0]?.status === 'sent' ? found.rows[0].external_id : undefined;
      });
      expect(txid).toBe(sentTxid);
      expect(await sendsTagged(tag)).toEqual([sentTxid]);
      await node.mine(1);
      await until('the withdrawal to complete', async () => {
        const found = await db.query<{ status: string }>('SELECT status FROM withdrawals WHERE id = $1', [
          id,
        ]);
        return found.rows[0]?.status === 'done' ? true : undefined;
      });
      expect(await sendsTagged(tag)).toEqual([sentTxid]);
      const report = await reconcile(db);
      expect(report.problems).toEqual([]);
      const balances = await db.query<{ available: string; locked: string }>(
        `SELECT available::text, locked::text FROM balances WHERE account_id = $1 AND currency = 'ltc'`,
        [account.id],
      );
      // 1 ltc - (0.25 + 0.001 fee), nothing left locked.
      expect(balances.rows[0]).toEqual({ available: '74900000', locked: '0' });
    } finally {
      await second.stop();
    }
  }, 120_000);
});
