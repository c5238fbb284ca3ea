import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** The route label of requests no route matched (404s, scans): one series, not one per URL. */
export const UNMATCHED_ROUTE = '(unmatched)';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface CounterChild {
  inc(): void;
}
interface HistogramChild {
  observe(value: number): void;
}

/** Records answered requests: by route pattern (never the raw URL) and status class. */
export interface RouteMetrics {
  record(method: string, route: string, statusCode: number, seconds: number): void;
}

/**
 * `http_requests_total{method,route,status_class}` and `http_request_duration_seconds{method,route}`
 * in `registry`. Children are cached by key, so a request costs two map lookups, an increment and
 * an observe. For servers that are not Fastify (or requests that bypass it); Fastify apps use
 * `registerRouteMetrics`.
 */
export function createRouteMetrics(registry: Registry): RouteMetrics {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern and status class.',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request received to the response sent, by route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const counters = new Map<string, CounterChild>();
  const histograms = new Map<string, HistogramChild>();
  return {
    record(method, route, statusCode, seconds) {
      const statusClass = `${Math.floor(statusCode / 100)}xx`;
      const routeKey = `${method} ${route}`;
      const countKey = `${routeKey} ${statusClass}`;
      let counter = counters.get(countKey);
      if (counter === undefined) {
        counter = requests.labels(method, route, statusClass);
        counters.set(countKey, counter);
      }
      counter.inc();
      let histogram = histograms.get(routeKey);
      if (histogram === undefined) {
        histogram = duration.labels(method, route);
        histograms.set(routeKey, histogram);
      }
      histogram.observe(seconds);
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
