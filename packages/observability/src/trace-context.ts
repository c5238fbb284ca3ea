import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * Carrying a trace across a durable hand-off (an outbox row written in a request, sent later by a
 * background loop): `currentTraceContext()` when the row is written, `withTraceContext()` around the
 * send, so the outgoing call joins the trace of the request that caused it. The W3C `traceparent`
 * (and `tracestate`) are kept as JSON text. Without tracing (no SDK registered) both are no-ops.
 */
export function currentTraceContext(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? null : JSON.stringify(carrier);
}

export function withTraceContext<T>(stored: string | null | undefined, fn: () => T): T {
  if (!stored) return fn();
  let carrier: Record<string, string>;
  try {
    const parsed: unknown = JSON.parse(stored);
    if (typeof parsed !== 'object' || parsed === null) return fn();
    carrier = parsed as Record<string, string>;
  } catch {
    return fn();
  }
  return context.with(propagation.extract(ROOT_CONTEXT, carrier), fn);
}
