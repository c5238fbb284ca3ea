import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import type { Attributes, Context, Span, TextMapGetter } from '@opentelemetry/api';
import type { BasicTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../settings/observability.js';

/**
 * The OpenTelemetry packages (about 15 MB of resident memory) are loaded only when tracing is
 * enabled, synchronously (they are CommonJS) so `createTracing` stays synchronous.
 */
const load = createRequire(import.meta.url);
interface Otel {
  api: typeof import('@opentelemetry/api');
  core: typeof import('@opentelemetry/core');
  sdk: typeof import('@opentelemetry/sdk-trace-base');
  resources: typeof import('@opentelemetry/resources');
}
let otelModules: Otel | undefined;
function otel(): Otel {
  otelModules ??= {
    api: load('@opentelemetry/api') as Otel['api'],
    core: load('@opentelemetry/core') as Otel['core'],
    sdk: load('@opentelemetry/sdk-trace-base') as Otel['sdk'],
    resources: load('@opentelemetry/resources') as Otel['resources'],
  };
  return otelModules;
}

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
    code: otel().api.SpanStatusCode.ERROR,
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
    const { context, SpanKind, trace } = otel().api;
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
    const { Metadata } = load('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
    const { OTLPTraceExporter: GrpcExporter } = load(
      '@opentelemetry/exporter-trace-otlp-grpc',
    ) as typeof import('@opentelemetry/exporter-trace-otlp-grpc');
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
    return new GrpcExporter({ url: endpoint ?? 'http://localhost:4317', metadata, timeoutMillis: timeoutMs });
  }
  const { OTLPTraceExporter: HttpExporter } = load(
    '@opentelemetry/exporter-trace-otlp-http',
  ) as typeof import('@opentelemetry/exporter-trace-otlp-http');
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
  const { api, core, sdk, resources } = otel();
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = sdk;
  const { ROOT_CONTEXT, SpanKind, trace } = api;
  const attributes: Attributes = {
    'service.name': settings.serviceName,
    'service.instance.id': settings.serviceInstanceId,
  };
  if (settings.serviceNamespace !== '') attributes['service.namespace'] = settings.serviceNamespace;
  const provider = new BasicTracerProvider({
    resource: resources.resourceFromAttributes(attributes),
    // A sampled (or unsampled) caller decides; new traces are sampled at TRACING_SAMPLING_RATE.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    spanProcessors: [
      new BatchSpanProcessor(exporterFor(settings), {
        scheduledDelayMillis: options.scheduledDelayMs ?? 5_000,
      }),
    ],
  });
  const tracer = provider.getTracer('ratelimit');
  const propagator = new core.W3CTraceContextPropagator();
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
