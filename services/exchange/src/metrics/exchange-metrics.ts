import { collectedGauge, collectedValue } from '@platform/observability/collected-gauge';
import { registerHistogram } from '@platform/observability/plain-histogram';
import { Counter, type Registry } from 'prom-client';
import type { Sql } from '../db/database.js';
import { lastReconcileRun } from '../ledger/reconcile-runs.js';
import type { OrderService } from '../orders/service.js';

/** What the metrics read of the running exchange; nothing here is on the order path. */
export interface ExchangeMetricSources {
  readonly db: Sql;
  readonly orders: OrderService;
  /** Open feed WebSocket connections, or undefined when the feed is off. */
  readonly feedConnections: () => number | undefined;
  /** Frames the feed did not deliver, by reason (FeedHub.dropped), or undefined when the feed is off. */
  readonly feedFramesDropped: () => Readonly<Record<string, number>> | undefined;
  readonly onError: (error: unknown) => void;
}

/**
 * A counter mirrored from a total the exchange already keeps (`MarketWriter.stats`), set at scrape
 * time: the order writers are not touched.
 */
function mirroredCounter(
  registry: Registry,
  spec: { name: string; help: string; read: () => Iterable<[market: string, total: number]> },
): void {
  new Counter({
    name: spec.name,
    help: spec.help,
    labelNames: ['market'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [market, total] of spec.read()) this.inc({ market }, total);
    },
  });
}

/**
 * The exchange's operator metrics, read at scrape time from the order writers' counters, the
 * books and the database: order batches (committed requests per batch is the ratio of the first
 * two), book depth, deposits and withdrawals by status, the age of the oldest `sending` withdrawal,
 * the last ledger reconciliation and the feed's connections.
 */
export function registerExchangeMetrics(registry: Registry, sources: ExchangeMetricSources): void {
  const { db, orders, onError } = sources;
  const writers = function* () {
    for (const id of orders.markets.keys()) {
      const writer = orders.writer(id);
      if (writer) yield [id, writer] as const;
    }
  };
  mirroredCounter(registry, {
    name: 'exchange_order_batches_committed_total',
    help: 'Order batches committed (one statement each), by market.',
    read: function* () {
      for (const [id, writer] of writers()) yield [id, writer.stats.batches];
    },
  });
  mirroredCounter(registry, {
    name: 'exchange_order_requests_committed_total',
    help: 'Order entry requests (place, cancel) committed, by market; divided by batches: the batch size.',
    read: function* () {
      for (const [id, writer] of writers()) yield [id, writer.stats.requests];
    },
  });
  mirroredCounter(registry, {
    name: 'exchange_order_batches_failed_total',
    help: 'Order batches whose statement failed (conflict, database error), by market.',
    read: function* () {
      for (const [id, writer] of writers()) yield [id, writer.stats.failed];
    },
  });
  registerHistogram(registry, {
    name: 'exchange_order_batch_commit_seconds',
    help: "Time from an order batch's statement sent to its commit answered (pipeline queueing included), by market.",
    read: function* () {
      for (const [id, writer] of writers()) yield [{ market: id }, writer.stats.commitSeconds];
    },
  });
  registerHistogram(registry, {
    name: 'exchange_order_batch_size',
    help: 'Requests (place, cancel) per committed order batch, by market.',
    read: function* () {
      for (const [id, writer] of writers()) yield [{ market: id }, writer.stats.batchSize];
    },
  });
  registerHistogram(registry, {
    name: 'exchange_engine_seconds_per_command',
    help: "Matching engine time per order command: a batch's compute time (engine, nonce and fund checks, settlement) divided among its requests, by market.",
    read: function* () {
      for (const [id, writer] of writers()) yield [{ market: id }, writer.stats.engineSecondsPerRequest];
    },
  });
  collectedGauge(registry, {
    name: 'exchange_book_depth',
    help: 'Price levels in the committed book, by market and side.',
    labelNames: ['market', 'side'],
    read: () => {
      const samples: { labels: { market: string; side: string }; value: number }[] = [];
      for (const [id, writer] of writers()) {
        const view = writer.view();
        samples.push({ labels: { market: id, side: 'bid' }, value: view.bids.length });
        samples.push({ labels: { market: id, side: 'ask' }, value: view.asks.length });
      }
      return samples;
    },
    onError,
  });
  collectedGauge(registry, {
    name: 'exchange_deposits',
    help: 'Deposits by status and rail (crypto, fiat).',
    labelNames: ['status', 'rail'],
    read: async () => {
      const { rows } = await db.query<{ status: string; rail: string; n: number }>(
        `SELECT status, CASE WHEN provider IS NULL THEN 'crypto' ELSE 'fiat' END AS rail, count(*)::int AS n
           FROM deposits GROUP BY 1, 2`,
      );
      return rows.map((row) => ({ labels: { status: row.status, rail: row.rail }, value: row.n }));
    },
    onError,
  });
  collectedGauge(registry, {
    name: 'exchange_withdrawals',
    help: 'Withdrawals by status and rail (crypto, fiat).',
    labelNames: ['status', 'rail'],
    read: async () => {
      const { rows } = await db.query<{ status: string; rail: string; n: number }>(
        'SELECT status, rail, count(*)::int AS n FROM withdrawals GROUP BY 1, 2',
      );
      return rows.map((row) => ({ labels: { status: row.status, rail: row.rail }, value: row.n }));
    },
    onError,
  });
  collectedValue(registry, {
    name: 'exchange_withdrawal_oldest_sending_age_seconds',
    help: 'How long the oldest withdrawal has been in `sending`; 0 when none is.',
    read: async () => {
      const { rows } = await db.query<{ age: number | null }>(
        `SELECT extract(epoch FROM now() - min(updated_at))::float8 AS age
           FROM withdrawals WHERE status = 'sending'`,
      );
      return Math.max(0, Number(rows[0]?.age ?? 0));
    },
    onError,
  });
  collectedValue(registry, {
    name: 'exchange_ledger_reconcile_ok',
    help: 'Result of the last ledger reconciliation (the periodic one, RECONCILE_INTERVAL_S, or `npm run admin -- reconcile`): 1 passed, 0 failed or none run yet (then the timestamp is 0).',
    read: async () => {
      const run = await lastReconcileRun(db);
      return run === undefined ? undefined : run.ok ? 1 : 0;
    },
    onError,
  });
  collectedValue(registry, {
    name: 'exchange_ledger_reconcile_last_run_timestamp_seconds',
    help: 'When the last ledger reconciliation ran (seconds since the epoch); 0 before the first.',
    read: async () => (await lastReconcileRun(db))?.ranAt,
    onError,
  });
  collectedValue(registry, {
    name: 'exchange_feed_connections',
    help: 'Open WebSocket connections of the live feed.',
    read: sources.feedConnections,
    onError,
  });
  new Counter({
    name: 'exchange_feed_frames_dropped_total',
    help: 'Feed frames not delivered, by reason: slow_consumer (the send buffer was full; the connection is dropped) or closed (sent to a connection already closing).',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const dropped = sources.feedFramesDropped();
      if (dropped) for (const [reason, total] of Object.entries(dropped)) this.inc({ reason }, total);
    },
  });
}
