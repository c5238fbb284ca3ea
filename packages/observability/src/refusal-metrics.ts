import type { FastifyInstance } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { UNMATCHED_ROUTE } from './route-metrics.js';

/**
 * Requests refused with an error of the service's registry, by route pattern and error name
 * (`validation_failed`, `insufficient_funds`, `rate_limited`...): an `onError` hook, so only refused
 * requests pay for it. `reasonOf` returns the service's error name, or undefined for an error that is
 * not one of its own (counted as `internal`).
 */
export function registerRefusalMetrics(
  app: FastifyInstance,
  registry: Registry,
  spec: { name: string; help: string; reasonOf: (error: unknown) => string | undefined },
): Counter<'route' | 'reason'> {
  const refused = new Counter({
    name: spec.name,
    help: spec.help,
    labelNames: ['route', 'reason'] as const,
    registers: [registry],
  });
  app.addHook('onError', (request, _reply, error, done) => {
    refused.inc({
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      reason: spec.reasonOf(error) ?? 'internal',
    });
    done();
  });
  return refused;
}
