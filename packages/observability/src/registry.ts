import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One prom-client registry per process, with the process metrics every service exposes: event-loop
 * lag, heap and GC, CPU, open handles (`collectDefaultMetrics`, prom-client's standard names such as
 * `nodejs_eventloop_lag_seconds`, `nodejs_heap_size_used_bytes`, `nodejs_gc_duration_seconds`).
 * Not prom-client's global registry: tests build several apps in one process.
 */
export function createMetricsRegistry(): Registry {
  return collectProcessMetrics(new Registry());
}

/** Adds the process metrics to a registry a service built itself. Once per process. */
export function collectProcessMetrics(registry: Registry): Registry {
  collectDefaultMetrics({ register: registry });
  return registry;
}
