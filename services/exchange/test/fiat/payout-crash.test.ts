import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { v3Headers } from '../support/signing.js';
import { eventually } from './platform.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const repo = path.resolve(serviceDir, '../..');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'fiat-crash-'));
const exchangeDb = useTestDatabase('exchange_fiat_crash');
const gatewayDb = useTestDatabase('paygate_fiat_crash');
const running: ServiceProcess[] = [];
const fronts: TcpFront[] = [];
afterAll(async () => {
  for (const proc of running) await proc.stop();
  for (const front of fronts) await front.close();
  rmSync(cwd, { recursive: true, force: true });
});

async function query<T>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('fiat payout across a crash (real processes, PostgreSQL)', () => {
  it('a process killed after the gateway accepted the payout, before recording it, pays once after restart', async () => {
    // Each process binds port 0 behind a front of this test process: the exchange restarts at the
    // address the gateway calls back, and no other process can take that address meanwhile.
    const [exchangeFront, gatewayFront] = [await startTcpFront(), await startTcpFront()];
    fronts.push(exchangeFront, gatewayFront);
    const exchangeUrl = exchangeFront.url;
    const exchangeEnv = {
      DATABASE_URL: exchangeDb.url,
      MASTER_KEY: 'cd'.repeat(32),
      MASTER_KEY_FILE: '',
      DATA_DIR: path.join(cwd, 'data'),
      SEED_DEMO: 'true',
      LOG_LEVEL: 'warn',
      CUSTODY_SANDBOX: 'false',
      PAYGATE_URL: gatewayFront.url,
      PUBLIC_URL: exchangeUrl,
    };
    const startExchange = async (failpoint?: string) => {
      const proc = await startServiceProcess({
        sandboxSecrets: true,
        name: 'exchange',
        entry: path.join(serviceDir, 'src/server.ts'),
        cwd,
        port: 0,
        env: { ...exchangeEnv, ...(failpoint ? { EXCHANGE_FAILPOINT: failpoint } : {}) },
        healthPath: '/health',
        timeoutMs: 60_000,
      });
      running.push(proc);
      exchangeFront.target(proc.port);
      return proc;
    };
    const gateway = await startServiceProcess({
      sandboxSecrets: true,
      name: 'paygate',
      entry: path.join(repo, 'services/paygate/src/server.ts'),
      cwd: repo,
      port: 0,
      env: {
        DATABASE_URL: gatewayDb.url,
        PUBLIC_URL: gatewayFront.url,
        PAYGATE_MERCHANT_CALLBACK_URL_EXCHANGE: `${exchangeUrl}/v3/paygate/callback`,
        PAYGATE_MERCHANT_RETURN_URL_EXCHANGE: `${exchangeUrl}/v3/paygate/return`,
        PAYOUT_SETTLE_MS: '200',
        WORKER_INTERVAL_MS: '50',
        CALLBACK_RETRY_BASE_MS: '100',
        CALLBACK_RETRY_MAX_MS: '1000',
        LOG_LEVEL: 'warn',
      },
      healthPath: '/health',
      timeoutMs: 60_000,
    });
    running.push(gateway);
    gatewayFront.target(gateway.port);
    const first = await startExchange('fiat-payout-after-send');

    const demo = JSON.parse(readFileSync(path.join(cwd, 'data/demo-api-key.json'), 'utf8'));
    const body = JSON.stringify({
      withdraw_type: 'uah',
      amount: 100,
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
    });
    // The request commits, then the dispatcher sends the payout and the fail point kills the process:
    // the answer may or may not have left before that.
    await fetch(`${exchangeUrl}/v3/auth/withdraw`, {
      method: 'POST',
      headers: v3Headers(demo.apiKey, demo.apiSecret, '/v3/auth/withdraw', body),
      body,
    }).catch(() => undefined);
    await eventually(async () => (first.isRunning() ? undefined : true));
    exchangeFront.target(undefined); // its port is free now: nothing may reach whoever binds it next
    const [row] = await query<{ id: number; status: string }>(
      exchangeDb.url,
      `SELECT id, status FROM withdrawals WHERE rail = 'fiat'`,
    );
    expect(row?.status).toBe('sending'); // the intent, committed before the call
    const paid = await query(gatewayDb.url, 'SELECT id FROM payouts WHERE reference_id = $1', [
      String(row!.id),
    ]);
    expect(paid).toHaveLength(1); // the gateway has it; the exchange never recorded its answer

    await startExchange();
    const done = await eventually(async () => {
      const [now] = await query<{ status: string; external_id: string }>(
        exchangeDb.url,
        'SELECT status, external_id FROM withdrawals WHERE id = $1',
        [row!.id],
      );
      return now?.status === 'done' ? now : undefined;
    }, 30_000);
    const payouts = await query<{ id: string }>(
      gatewayDb.url,
      'SELECT id FROM payouts WHERE reference_id = $1',
      [String(row!.id)],
    );
    expect(payouts).toHaveLength(1);
    expect(done.external_id).toBe(payouts[0]!.id);
    const [balance] = await query<{ available: string; locked: string }>(
      exchangeDb.url,
      `SELECT available::text, locked::text FROM balances b JOIN accounts a ON a.id = b.account_id
        WHERE a.email = 'demo@example.com' AND b.currency = 'uah'`,
    );
    // The demo account starts with 1,000,000 UAH; 101.50 left once (ledger precision 6).
    expect(balance).toEqual({ available: String((1_000_000n - 101n) * 1_000_000n - 500_000n), locked: '0' });
  }, 120_000);
});
