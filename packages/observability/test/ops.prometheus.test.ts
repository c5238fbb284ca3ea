/**
 * The repository's alert rules and a real Prometheus (Debian package `prometheus`) against the
 * services started as real processes (issue 30): every rule file passes `promtool check rules`;
 * Prometheus scrapes each service's metrics listener (METRICS_PORT=0, found by what answers
 * /metrics), the series of each service are read back through its HTTP API, and the exchange's
 * `ExchangeReconcileFailed` rule (ops/prometheus/rules, unchanged) fires once a failed
 * reconciliation is recorded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { requireBinary } from '@platform/testkit/binaries';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { findListeningPort, httpAnswers } from '@platform/testkit/listening';
import { type PrometheusServer, startPrometheus } from '@platform/testkit/prometheus';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const RULES_DIR = path.join(REPO, 'ops/prometheus/rules');
const DASHBOARDS_DIR = path.join(REPO, 'ops/grafana');
const exchangeDb = useTestDatabase('exchange');
// PostgreSQL rather than the embedded PGlite: five processes start at once on a loaded machine.
const paygateDb = useTestDatabase('paygate');
const eventsDb = useTestDatabase('events');

interface Service {
  readonly job: string;
  readonly process: ServiceProcess;
  readonly metricsPort: number;
}

let dir = '';
let prometheus: PrometheusServer | undefined;
const services: Service[] = [];

async function start(job: string, entry: string, env: NodeJS.ProcessEnv): Promise<Service> {
  const process = await startServiceProcess({
    name: job,
    entry: path.join(REPO, entry),
    cwd: REPO,
    port: 0,
    // The services run on PostgreSQL with their documented sandbox secrets (issue 28's rule).
    sandboxSecrets: true,
    env: { LOG_LEVEL: 'warn', ...env },
    healthPath: '/health',
    timeoutMs: 240_000,
  });
  const metricsPort = await findListeningPort(process.pid ?? -1, (port) => httpAnswers(port, '/metrics'), {
    exclude: [process.port],
    timeoutMs: 10_000,
  });
  const service = { job, process, metricsPort };
  services.push(service);
  return service;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ops-prometheus-'));
  const [, , , blog] = await Promise.all([
    start('exchange', 'services/exchange/src/server.ts', {
      DATABASE_URL: exchangeDb.url,
      MASTER_KEY: 'ab'.repeat(32),
      MASTER_KEY_FILE: '',
      DATA_DIR: path.join(dir, 'exchange'),
      SEED_DEMO: 'false',
    }),
    start('paygate', 'services/paygate/src/server.ts', {
      DATABASE_URL: paygateDb.url,
      DATA_DIR: path.join(dir, 'paygate'),
    }),
    start('events', 'services/events/src/server.ts', {
      DATABASE_URL: eventsDb.url,
      DATA_DIR: path.join(dir, 'events'),
    }),
    start('blog-graphql', 'services/blog-graphql/src/server.ts', { BLOG_DATA_DIR: path.join(dir, 'blog') }),
  ]);
  await start('graphql-proxy', 'services/graphql-proxy/src/server.ts', {
    PATHS_BASE_DIR: path.join(dir, 'proxy'),
    UPSTREAM_GRAPHQL_ENDPOINT: `${blog.process.url}/graphql`,
  });
  prometheus = await startPrometheus({
    jobs: services.map((service) => ({ job: service.job, targets: [`127.0.0.1:${service.metricsPort}`] })),
    ruleFiles: [`${RULES_DIR}/*.rules.yml`],
  });
}, 420_000);

afterAll(async () => {
  await prometheus?.stop();
  await Promise.all(services.map((service) => service.process.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<Sample[]> {
  return (prometheus as PrometheusServer).query(promql);
}

/** Polls until `promql` returns a series (bounded by the test's timeout). */
async function present(promql: string): Promise<Sample[]> {
  for (;;) {
    const result = await query(promql);
    if (result.length > 0) return result;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('alert rules and a real Prometheus against the services', () => {
  it('every rule file passes promtool check rules', async () => {
    const files = (await readdir(RULES_DIR)).filter((name) => name.endsWith('.rules.yml'));
    expect(files.sort()).toEqual([
      'blog-graphql.rules.yml',
      'events.rules.yml',
      'exchange.rules.yml',
      'graphql-proxy.rules.yml',
      'paygate.rules.yml',
    ]);
    const promtool = requireBinary('promtool', 'prometheus');
    const checked = spawnSync(
      promtool,
      ['check', 'rules', ...files.map((name) => path.join(RULES_DIR, name))],
      {
        encoding: 'utf8',
      },
    );
    expect(checked.stderr + checked.stdout).not.toMatch(/FAILED/);
    expect(checked.status).toBe(0);
  });

  it('the public ports never serve /metrics', async () => {
    for (const service of services) {
      const answer = await fetch(`${service.process.url}/metrics`);
      await answer.arrayBuffer();
      expect(answer.status, service.job).toBe(404);
    }
  });

  it("scrapes each service's process, route and service series", async () => {
    // One request per service, so each has a route series.
    for (const service of services) await (await fetch(`${service.process.url}/health/ready`)).arrayBuffer();
    for (const service of services) {
      const up = await present(`up{job="${service.job}"} == 1`);
      expect(up[0]?.metric.job).toBe(service.job);
      await present(`nodejs_heap_size_used_bytes{job="${service.job}"}`);
      await present(`nodejs_eventloop_lag_seconds{job="${service.job}"}`);
      await present(`http_requests_total{job="${service.job}", route="/health/ready", status_class="2xx"}`);
    }
    await present('exchange_book_depth{job="exchange", side="bid"}');
    await present('exchange_order_batches_committed_total{job="exchange"}');
    await present('exchange_withdrawal_oldest_sending_age_seconds{job="exchange"}');
    await present('exchange_order_batch_commit_seconds_count{job="exchange"}');
    await present('exchange_engine_seconds_per_command_count{job="exchange"}');
    await present('exchange_feed_frames_dropped_total{job="exchange", reason="slow_consumer"}');
    // The periodic reconciliation ran soon after the start and passed.
    await present('exchange_ledger_reconcile_ok{job="exchange"} == 1');
    await present('paygate_callback_outbox_depth{job="paygate"}');
    await present('paygate_callback_oldest_undelivered_age_seconds{job="paygate"}');
    await present('events_cache_hits_total{job="events"}');
    await present('events_change_feed_lag_seconds_count{job="events"}');
    await present('graphql_proxy_breaker_open{job="graphql-proxy"}');
    await present('graphql_proxy_queue_oldest_age_seconds{job="graphql-proxy"}');
    // Nothing is firing on a healthy platform.
    expect(await query('ALERTS{alertstate="firing"}')).toEqual([]);
  }, 120_000);

  it('every dashboard query is valid PromQL and finds series', async () => {
    const names = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
    expect(names).toEqual(services.map((service) => `${service.job}.json`).sort());
    for (const name of names) {
      const dashboard = JSON.parse(await readFile(path.join(DASHBOARDS_DIR, name), 'utf8')) as {
        panels: { title: string; targets: { expr: string }[] }[];
      };
      for (const panel of dashboard.panels) {
        for (const target of panel.targets) {
          const expr = target.expr.replaceAll('$__rate_interval', '1m');
          const response = await fetch(
            `${(prometheus as PrometheusServer).url}/api/v1/query?query=${encodeURIComponent(expr)}`,
          );
          const body = (await response.json()) as { status: string; error?: string };
          expect(body, `${name}: ${panel.title}: ${expr}`).toMatchObject({ status: 'success' });
        }
      }
    }
  }, 120_000);

  it('fires ExchangeReconcileFailed once a failed reconciliation is recorded', async () => {
    const db = new pg.Client({ connectionString: exchangeDb.url });
    await db.connect();
    try {
      await db.query('INSERT INTO reconcile_runs (ok, problems) VALUES (false, 3)');
    } finally {
      await db.end();
    }
    const firing = await present('ALERTS{alertname="ExchangeReconcileFailed", alertstate="firing"}');
    expect(firing[0]?.metric).toMatchObject({ job: 'exchange', severity: 'critical' });
  }, 120_000);
});
