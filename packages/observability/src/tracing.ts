import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * OpenTelemetry tracing for a service, off by default and turned on by the standard variables:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, or
 * `OTEL_TRACES_EXPORTER=otlp|console`; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it
 * off. `OTEL_EXPORTER_OTLP_PROTOCOL` is `http/protobuf` (default) or `http/json`; `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER(_ARG)` and the exporter's own `OTEL_EXPORTER_OTLP_*`
 * (headers, timeout) are read by the SDK as its specification says.
 *
 * When on, it registers a global tracer provider with W3C `traceparent` propagation, and the official
 * instrumentations of the HTTP server and client (`node:http`), of `fetch`/undici and of `pg`. They
 * patch modules as they are loaded, so `startTracing` must run before the service imports Fastify or
 * pg: each service's `src/telemetry.ts` calls it and is the first import of its `server.ts`.
 *
 * The packages (several MB of resident memory) are loaded only when tracing is on.
 */
export interface TracingHandle {
  readonly enabled: boolean;
  /** Exports the spans finished so far. */
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

export class TracingSettingError extends Error {}

const DISABLED: TracingHandle = {
  enabled: false,
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** Whether the environment asks for traces, and which exporter. */
export function tracingExporterKind(env: Env): 'otlp' | 'console' | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter === 'console') return 'console';
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp') {
    throw new TracingSettingError(`OTEL_TRACES_EXPORTER must be otlp, console or none, got "${exporter}"`);
  }
  if (exporter === 'otlp') return 'otlp';
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return endpoint ? 'otlp' : undefined;
}

/** Probes and scrapes are not traced: they would drown the requests operators look for. */
function ignoredIncoming(request: IncomingMessage): boolean {
  const url = request.url ?? '';
  return url === '/metrics' || url.startsWith('/health');
}

export function startTracing(defaultServiceName: string, env: Env): TracingHandle {
  const kind = tracingExporterKind(env);
  if (kind === undefined) return DISABLED;
  const load = createRequire(import.meta.url);
  const node = load('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const resources = load('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = load(
    '@opentelemetry/instrumentation',
  ) as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = load(
    '@opentelemetry/instrumentation-http',
  ) as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = load(
    '@opentelemetry/instrumentation-undici',
  ) as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = load(
    '@opentelemetry/instrumentation-pg',
  ) as typeof import('@opentelemetry/instrumentation-pg');

  let exporter: SpanExporter;
  if (kind === 'console') {
    exporter = new node.ConsoleSpanExporter();
  } else {
    const protocol = (
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
      env.OTEL_EXPORTER_OTLP_PROTOCOL ??
      'http/protobuf'
    )
      .trim()
      .toLowerCase();
    if (protocol === 'http/json') {
      const { OTLPTraceExporter } = load(
        '@opentelemetry/exporter-trace-otlp-http',
      ) as typeof import('@opentelemetry/exporter-trace-otlp-http');
      exporter = new OTLPTraceExporter();
    } else if (protocol === 'http/protobuf') {
      const { OTLPTraceExporter } = load(
        '@opentelemetry/exporter-trace-otlp-proto',
      ) as typeof import('@opentelemetry/exporter-trace-otlp-proto');
      exporter = new OTLPTraceExporter();
    } else {
      throw new TracingSettingError(
        `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "${protocol}"`,
      );
    }
  }
  const resource = resources
    .resourceFromAttributes({ 'service.name': defaultServiceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector, resources.processDetector] }));
  const provider = new node.NodeTracerProvider({
    resource,
    spanProcessors: [new node.BatchSpanProcessor(exporter)],
  });
  // Global provider, AsyncLocalStorage context and the W3C trace-context propagator.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: ignoredIncoming }),
      new UndiciInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  return {
    enabled: true,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
