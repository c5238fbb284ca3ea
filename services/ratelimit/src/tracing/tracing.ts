import { AsyncLocalStorage } from 'node:async_hooks';
import { Metadata } from '@grpc/grpc-js';
import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../settings/observability.js';

/**
 * OpenTelemetry tracing for the service (`TRACING_*` settings, OTLP over http or grpc). The core
 * calls `startCallSpan` for each ShouldRateLimit call (gRPC metadata or HTTP headers as the carrier,
 * so an incoming W3C `traceparent` makes the call a child of the caller's span), wraps the backend
 * round trip in `span.child(...)`, and ends the span. Nothing is registered globally.
 */

/** gRPC `Metadata` (structurally) or Node's incoming HTTP headers. */
export type TraceCarrier =
  | { get(key: string): unknown[]; getMap(): Record<string, unknown> }
  | Readonly<Record<string, string | string[] | undefined>>;

export interface CallSpan {
  readonly traceId: string;
  readonly spanId: string;
  setAttributes(attributes: Attributes): void;
  /** Runs `fn` inside a client span (the backend round trip); the span records a thrown error. */
  child<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T>;
  /** Ends the call span; an error marks it failed. Idempotent. */
  end(error?: unknown): void;
}

export interface Tracing {
  readonly enabled: boolean;
  startCallSpan(name: string, carrier?: TraceCarrier): CallSpan;
  /** Exports the spans finished so far. */
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

function isMetadata(
  c: TraceCarrier,
): c is { get(key: string): unknown[]; getMap(): Record<string, unknown> } {
  return typeof (c as { getMap?: unknown }).getMap === 'function';
}

const getter: TextMapGetter<TraceCarrier> = {
  keys: (c) => (isMetadata(c) ? Object.keys(c.getMap()) : Object.keys(c)),
  get(c, key) {
    if (isMetadata(c)) {
      const values = c.get(key).map(String);
      return values.length > 0 ? values : undefined;
    }
    return c[key];
  },
};

function recordError(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

class ActiveCallSpan implements CallSpan {
  private ended = false;
  constructor(
    private readonly span: Span,
    private readonly ctx: Context,
    private readonly tracer: ReturnType<BasicTracerProvider['getTracer']>,
  ) {}
  get traceId(): string {
    return this.span.spanContext().traceId;
  }
  get spanId(): string {
    return this.span.spanContext().spanId;
  }
  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }
  async child<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, this.ctx);
    try {
      return await context.with(trace.setSpan(this.ctx, span), fn);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) recordError(this.span, error);
    this.span.end();
  }
}

const NOOP_SPAN: CallSpan = {
  traceId: '',
  spanId: '',
  setAttributes: () => {},
  child: (_name, fn) => fn(),
  end: () => {},
};

/** Tracing that records nothing (`TRACING_ENABLED=false`). */
export const NOOP_TRACING: Tracing = {
  enabled: false,
  startCallSpan: () => NOOP_SPAN,
  forceFlush: async () => {},
  shutdown: async () => {},
};

function exporterFor(settings: TracingSettings): SpanExporter {
  const { endpoint, headers, timeoutMs } = settings.otlp;
  if (settings.protocol === 'grpc') {
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
    return new GrpcExporter({ url: endpoint ?? 'http://localhost:4317', metadata, timeoutMillis: timeoutMs });
  }
  return new HttpExporter({
    url: endpoint ?? 'http://localhost:4318/v1/traces',
    headers,
    timeoutMillis: timeoutMs,
  });
}

export function createTracing(
  settings: TracingSettings,
  options: { scheduledDelayMs?: number } = {},
): Tracing {
  if (!settings.enabled) return NOOP_TRACING;
  const attributes: Attributes = {
    'service.name': settings.serviceName,
    'service.instance.id': settings.serviceInstanceId,
  };
  if (settings.serviceNamespace !== '') attributes['service.namespace'] = settings.serviceNamespace;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(attributes),
    // A sampled (or unsampled) caller decides; new traces are sampled at TRACING_SAMPLING_RATE.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    spanProcessors: [
      new BatchSpanProcessor(exporterFor(settings), {
        scheduledDelayMillis: options.scheduledDelayMs ?? 5_000,
      }),
    ],
  });
  const tracer = provider.getTracer('ratelimit');
  const propagator = new W3CTraceContextPropagator();
  return {
    enabled: true,
    startCallSpan(name, carrier) {
      const parent = carrier ? propagator.extract(ROOT_CONTEXT, carrier, getter) : ROOT_CONTEXT;
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
      return new ActiveCallSpan(span, trace.setSpan(parent, span), tracer);
    },
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The call span of the request being handled, carried across awaits, so code far from the
 * transport (the backend decorator) can open child spans without the span being passed down.
 */
const currentCall = new AsyncLocalStorage<CallSpan>();

export function runInCallSpan<T>(span: CallSpan, fn: () => T): T {
  return currentCall.run(span, fn);
}

export function currentCallSpan(): CallSpan | undefined {
  return currentCall.getStore();
}
