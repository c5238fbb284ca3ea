import { startTracing } from '@platform/observability/tracing';

/**
 * OpenTelemetry, off unless the standard `OTEL_*` variables ask for it (see the README). Imported
 * first by server.ts: the instrumentations patch `http` and `pg` as they are loaded. The SDK reads
 * its own `OTEL_*` variables, as its specification says, so they are not parsed in config.ts.
 */
export const tracing = startTracing('events', process.env);
