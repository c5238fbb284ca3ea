import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * Client spans made by hand where no official instrumentation is loaded (gRPC calls of grpc-js,
 * statements of the embedded PGlite). Like the pg instrumentation with `requireParentSpan`, a span
 * is made only inside a traced operation (a request's span is active): with tracing off, or for
 * background work outside any trace, the cost is one context lookup.
 */
const tracer = trace.getTracer('@platform/observability');

/** A traced operation's context, kept to parent a later call (services need not import the API). */
export type TraceContext = Context;

/** The active context when it holds a recording span (a traced request), else undefined. */
export function tracedContext(): Context | undefined {
  const active = context.active();
  return trace.getSpan(active)?.isRecording() ? active : undefined;
}

export interface ClientSpan {
  /** The W3C `traceparent` (and `tracestate`) to send with the call. */
  readonly carrier: Readonly<Record<string, string>>;
  /** Ends the span; an error marks it failed. */
  end(error?: { message: string } | undefined, attributes?: Attributes): void;
}

/**
 * A CLIENT span for one outgoing call made on behalf of `parents` (the contexts of the operations
 * it serves, as `tracedContext()` returned them): the first is its parent, the others are linked
 * (a call that batches several requests' work). Undefined when none of them is traced.
 */
export function startClientSpan(
  name: string,
  attributes: Attributes,
  parents: readonly (Context | undefined)[],
): ClientSpan | undefined {
  const traced = parents.filter((parent): parent is Context => parent !== undefined);
  const parent = traced[0];
  if (parent === undefined) return undefined;
  const links: Link[] = [];
  for (const other of traced.slice(1)) {
    const linked = trace.getSpanContext(other);
    if (linked) links.push({ context: linked });
  }
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, links }, parent);
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), carrier);
  return {
    carrier,
    end(error, more) {
      if (more) span.setAttributes(more);
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      span.end();
    },
  };
}

/** The statement's first keyword (`SELECT`, `INSERT`, `WITH`...), as the pg instrumentation names spans. */
function operationOf(text: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(text);
  return match ? (match[1] as string).toUpperCase() : 'QUERY';
}

type Query = (text: string, params?: readonly unknown[]) => Promise<unknown>;

/**
 * Wraps a PGlite query function so each statement run inside a traced operation is a CLIENT span,
 * shaped like those of `@opentelemetry/instrumentation-pg` (`pglite.query:SELECT <db>`, `db.system`
 * postgresql, `db.statement` with placeholders, never the parameters): PGlite runs in the process
 * and no instrumentation knows it.
 */
export function withStatementSpans<Q extends Query>(dbName: string, query: Q): Q {
  const traced = (text: string, params?: readonly unknown[]) => {
    const parent = tracedContext();
    if (parent === undefined) return query(text, params);
    const operation = operationOf(text);
    const span = tracer.startSpan(
      `pglite.query:${operation} ${dbName}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system': 'postgresql',
          'db.name': dbName,
          'db.operation': operation,
          'db.statement': text,
        },
      },
      parent,
    );
    return context
      .with(trace.setSpan(parent, span), () => query(text, params))
      .then(
        (result) => {
          span.end();
          return result;
        },
        (error: unknown) => {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: error instanceof Error ? error.message : String(error),
          });
          span.end();
          throw error;
        },
      );
  };
  return traced as Q;
}

/** A database handle as `@platform/sql-storage` opens it (structurally: this package does not import it). */
interface SpannableDatabase {
  query: Query;
  transaction<T>(fn: (tx: { query: Query }) => Promise<T>): Promise<T>;
}

/** `withStatementSpans` on a database's statements, those inside its transactions included. */
export function withDatabaseSpans<D extends SpannableDatabase>(dbName: string, db: D): D {
  return {
    ...db,
    query: withStatementSpans(dbName, db.query),
    transaction: <T>(fn: (tx: { query: Query }) => Promise<T>) =>
      db.transaction((tx) => fn({ ...tx, query: withStatementSpans(dbName, tx.query) })),
  };
}

/**
 * Runs `fn` inside a new span of its own (a root span outside any request: a periodic job), so the
 * statements and calls it makes are traced under it. Without tracing the span does not record and
 * nothing below it is made.
 */
export async function inSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  });
}
