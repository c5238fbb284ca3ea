import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

/** The route label of requests no route matched (404s, scans): one series, not one per URL. */
export const UNMATCHED_ROUTE = '(unmatched)';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Records answered requests: by route pattern (never the raw URL) and status class. */
export interface RouteMetrics {
  record(method: string, route: string, statusCode: number, seconds: number): void;
}

/** One method and route: requests by status class (index 1..5) and the duration histogram. */
interface RouteEntry {
  readonly method: string;
  readonly route: string;
  readonly byClass: Float64Array;
  /** Observations per bucket (not cumulative; the exposition adds them up). */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

interface Sample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A metric object as the registry reads it (`name`, `help`, `type`, `get()`): prom-client formats its
 * samples like its own. Plain numbers behind it, so the request path pays no label validation or
 * hashing (prom-client's labelled children do both on every call: about 8 us a request measured here).
 */
function registerCollected(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  samples: () => Sample[],
): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset: () => {},
  };
  // biome-ignore lint/suspicious/noExplicitAny: prom-client types registerMetric as its Metric class; the registry reads only these fields
  registry.registerMetric(metric as any);
}

/**
 * `http_requests_total{method,route,status_class}` and `http_request_duration_seconds{method,route}`
 * in `registry`, kept as plain numbers per method and route (two map lookups, three increments and
 * a bucket search per request) and turned into samples at scrape time. For servers that are not
 * Fastify (or requests that bypass it); Fastify apps use `registerRouteMetrics`.
 */
export function createRouteMetrics(registry: Registry): RouteMetrics {
  const byMethod = new Map<string, Map<string, RouteEntry>>();
  const entries: RouteEntry[] = [];
  registerCollected(
    registry,
    'http_requests_total',
    'HTTP requests answered, by route pattern and status class.',
    'counter',
    () => {
      const samples: Sample[] = [];
      for (const entry of entries) {
        for (let cls = 1; cls <= 5; cls += 1) {
          const value = entry.byClass[cls] as number;
          if (value > 0) {
            samples.push({
              labels: { method: entry.method, route: entry.route, status_class: `${cls}xx` },
              value,
            });
          }
        }
      }
      return samples;
    },
  );
  registerCollected(
    registry,
    'http_request_duration_seconds',
    'Time from the request received to the response sent, by route pattern.',
    'histogram',
    () => {
      const samples: Sample[] = [];
      for (const entry of entries) {
        const labels = { method: entry.method, route: entry.route };
        let cumulative = 0;
        DURATION_BUCKETS.forEach((bound, i) => {
          cumulative += entry.buckets[i] as number;
          samples.push({
            metricName: 'http_request_duration_seconds_bucket',
            labels: { le: String(bound), ...labels },
            value: cumulative,
          });
        });
        samples.push({
          metricName: 'http_request_duration_seconds_bucket',
          labels: { le: '+Inf', ...labels },
          value: entry.count,
        });
        samples.push({ metricName: 'http_request_duration_seconds_sum', labels, value: entry.sum });
        samples.push({ metricName: 'http_request_duration_seconds_count', labels, value: entry.count });
      }
      return samples;
    },
  );
  return {
    record(method, route, statusCode, seconds) {
      let routes = byMethod.get(method);
      if (routes === undefined) {
        routes = new Map();
        byMethod.set(method, routes);
      }
      let entry = routes.get(route);
      if (entry === undefined) {
        entry = {
          method,
          route,
          byClass: new Float64Array(6),
          buckets: new Float64Array(DURATION_BUCKETS.length),
          sum: 0,
          count: 0,
        };
        routes.set(route, entry);
        entries.push(entry);
      }
      const cls = Math.floor(statusCode / 100);
      if (cls >= 1 && cls <= 5) entry.byClass[cls] = (entry.byClass[cls] as number) + 1;
      entry.sum += seconds;
      entry.count += 1;
      for (let i = 0; i < DURATION_BUCKETS.length; i += 1) {
        if (seconds <= (DURATION_BUCKETS[i] as number)) {
          entry.buckets[i] = (entry.buckets[i] as number) + 1;
          break;
        }
      }
    },
  };
}

/**
 * Per-route request metrics on a Fastify app (see `createRouteMetrics`): the route label is the
 * registered pattern (`/v3/book/:symbol`), so the number of series stays bounded whatever clients
 * send; requests no route matched share `(unmatched)`. Call it on the root instance before the
 * routes are registered (the hook then covers all of them). Pass `metrics` when requests outside
 * Fastify are recorded into the same registry.
 */
export function registerRouteMetrics(
  app: FastifyInstance,
  registry: Registry,
  metrics: RouteMetrics = createRouteMetrics(registry),
): RouteMetrics {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.record(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  return metrics;
}
