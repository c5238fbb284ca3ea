import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { HistogramCounts, histogramSamples, registerCollected, type Sample } from './plain-histogram.js';

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
  readonly duration: HistogramCounts;
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
        histogramSamples(
          'http_request_duration_seconds',
          { method: entry.method, route: entry.route },
          entry.duration,
          samples,
        );
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
          duration: new HistogramCounts(DURATION_BUCKETS),
        };
        routes.set(route, entry);
        entries.push(entry);
      }
      const cls = Math.floor(statusCode / 100);
      if (cls >= 1 && cls <= 5) entry.byClass[cls] = (entry.byClass[cls] as number) + 1;
      entry.duration.observe(seconds);
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
