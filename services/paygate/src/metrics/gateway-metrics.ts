import { collectedGauge, collectedValue } from '@platform/observability/collected-gauge';
import type { Sql } from '@platform/sql-storage/database';
import type { Registry } from 'prom-client';

/**
 * What the gateway's operators watch, read from the database at scrape time (no hot-path code):
 * invoices and payouts by status, the callback outbox (depth, age of the oldest undelivered
 * callback, delivery attempts by outcome) and card declines by reason.
 */
export function registerGatewayMetrics(
  registry: Registry,
  db: Sql,
  now: () => number,
  onError: (error: unknown) => void,
): void {
  const byStatus = (table: 'invoices' | 'payouts') => async () => {
    const { rows } = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM ${table} GROUP BY status`,
    );
    return rows.map((row) => ({ labels: { status: row.status }, value: row.n }));
  };
  collectedGauge(registry, {
    name: 'paygate_invoices',
    help: 'Invoices by status.',
    labelNames: ['status'],
    read: byStatus('invoices'),
    onError,
  });
  collectedGauge(registry, {
    name: 'paygate_payouts',
    help: 'Payouts by status.',
    labelNames: ['status'],
    read: byStatus('payouts'),
    onError,
  });
  collectedValue(registry, {
    name: 'paygate_callback_outbox_depth',
    help: 'Callbacks not yet delivered to their merchant.',
    read: async () => {
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM callback_outbox WHERE delivered_at IS NULL',
      );
      return rows[0]?.n ?? 0;
    },
    onError,
  });
  collectedValue(registry, {
    name: 'paygate_callback_oldest_undelivered_age_seconds',
    help: 'Age of the oldest callback not yet delivered; 0 when none waits.',
    read: async () => {
      const { rows } = await db.query<{ oldest: Date | string | null }>(
        'SELECT min(created_at) AS oldest FROM callback_outbox WHERE delivered_at IS NULL',
      );
      const oldest = rows[0]?.oldest;
      if (oldest === null || oldest === undefined) return 0;
      return Math.max(0, (now() - new Date(oldest).getTime()) / 1000);
    },
    onError,
  });
  collectedGauge(registry, {
    name: 'paygate_callback_delivery_attempts',
    help: 'Callback delivery attempts recorded in the outbox, by outcome (delivered or failed); only grows.',
    labelNames: ['outcome'],
    read: async () => {
      const { rows } = await db.query<{ attempts: number; delivered: number }>(
        `SELECT coalesce(sum(attempts), 0)::int AS attempts, count(delivered_at)::int AS delivered
           FROM callback_outbox`,
      );
      const row = rows[0] ?? { attempts: 0, delivered: 0 };
      return [
        { labels: { outcome: 'delivered' }, value: row.delivered },
        { labels: { outcome: 'failed' }, value: row.attempts - row.delivered },
      ];
    },
    onError,
  });
  collectedGauge(registry, {
    name: 'paygate_card_declines',
    help: 'Invoices whose card payment failed, by the processor reason.',
    labelNames: ['reason'],
    read: async () => {
      const { rows } = await db.query<{ reason: string | null; n: number }>(
        `SELECT failure_reason AS reason, count(*)::int AS n FROM invoices
          WHERE status = 'failed' GROUP BY failure_reason`,
      );
      return rows.map((row) => ({ labels: { reason: row.reason ?? 'unknown' }, value: row.n }));
    },
    onError,
  });
}
