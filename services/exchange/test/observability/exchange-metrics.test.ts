import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { startReconcileSchedule } from '../../src/ledger/reconcile-schedule.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

/** The value of one sample in the exposition text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`${what}: not within 5 s`);
}

describe('exchange metrics: order batches, engine time, periodic reconciliation (postgres)', () => {
  const target = usePostgresTarget();
  const registry = new Registry();
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ db: target.db(), reference, secretBox, metrics: registry });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('counts each committed batch: its size, commit latency and engine time per request', async () => {
    const { account, apiKey, secret } = await accountWithKey(target.db(), ['read', 'trade']);
    await credit(target.db(), account.id, 'usdt', 1_000_000n * 10n ** 8n);
    const trader = client(() => app, apiKey, secret);
    for (let i = 0; i < 5; i += 1) {
      const response = await trader.v3('/v3/auth/w/order/submit', {
        symbol: 'btcusdt',
        type: 'limit',
        amount: '0.001',
        price: String(20_000 + i),
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    const text = await registry.metrics();
    const m = '{market="btcusdt"}';
    const batches = sample(text, `exchange_order_batches_committed_total${m}`) as number;
    expect(batches).toBeGreaterThanOrEqual(1);
    // One request per batch here (each waits for its answer): sizes 1, five requests in all.
    expect(sample(text, `exchange_order_batch_size_sum${m}`)).toBe(5);
    expect(sample(text, `exchange_order_batch_size_count${m}`)).toBe(batches);
    expect(sample(text, `exchange_order_batch_commit_seconds_count${m}`)).toBe(batches);
    expect(sample(text, `exchange_order_batch_commit_seconds_sum${m}`)).toBeGreaterThan(0);
    expect(sample(text, `exchange_engine_seconds_per_command_count${m}`)).toBe(5);
    expect(sample(text, `exchange_engine_seconds_per_command_bucket{le="+Inf",market="btcusdt"}`)).toBe(5);
    // The feed is off in this app: no dropped frames reported, the series exist at 0 only with it.
    expect(text).toContain('# TYPE exchange_feed_frames_dropped_total counter');
  });

  it('runs the reconciliation when due, records each run, and the gauge reads the last', async () => {
    const db = target.db();
    const runs = async () =>
      Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM reconcile_runs')).rows[0]?.n);
    const reports: boolean[] = [];
    const schedule = startReconcileSchedule(
      db,
      200,
      (report) => reports.push(report.ok),
      (error) => {
        throw error;
      },
    );
    try {
      await until(async () => (await runs()) >= 1, 'a first run recorded');
      expect(sample(await registry.metrics(), 'exchange_ledger_reconcile_ok')).toBe(1);
      // A balance that no longer equals its legs: the next run fails, and the gauge says so.
      await db.query(
        `UPDATE balances SET available = available + 1
          WHERE account_id = (SELECT min(account_id) FROM balances WHERE currency = 'usdt') AND currency = 'usdt'`,
      );
      await until(async () => reports.includes(false), 'a failed run recorded');
      expect(sample(await registry.metrics(), 'exchange_ledger_reconcile_ok')).toBe(0);
      // Not more often than the interval: runs are at least 200 ms apart by the database's clock.
      const { rows } = await db.query<{ gap: number | null }>(
        `SELECT min(gap)::float8 AS gap FROM (
           SELECT extract(epoch FROM ran_at - lag(ran_at) OVER (ORDER BY id)) AS gap FROM reconcile_runs) g`,
      );
      expect(Number(rows[0]?.gap)).toBeGreaterThanOrEqual(0.2);
    } finally {
      await schedule.stop();
      await db.query(
        `UPDATE balances SET available = available - 1
          WHERE account_id = (SELECT min(account_id) FROM balances WHERE currency = 'usdt') AND currency = 'usdt'`,
      );
    }
  });
});
