import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { createTracing } from '../../src/tracing/tracing.js';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver;
let receiverUrl = '';
let received: OtlpReceiver['received'] = [];
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  receiverUrl = receiver.url;
  received = receiver.received;
});
afterAll(() => receiver.close());
beforeEach(() => receiver.clear());
const spans = () => receiver.spans();

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_SPAN = '00f067aa0ba902b7';

describe('tracing over OTLP/HTTP', () => {
  it('exports a call span that continues the incoming W3C trace and a child span for the backend', async () => {
    const settings = parseObservabilitySettings({
      TRACING_ENABLED: 'true',
      TRACING_SERVICE_NAME: 'rl-test',
      TRACING_SERVICE_NAMESPACE: 'edge',
      TRACING_SERVICE_INSTANCE_ID: 'instance-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=secret',
    });
    const tracing = createTracing(settings.tracing);
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`);
    const call = tracing.startCallSpan('ShouldRateLimit', metadata);
    const result = await call.child('redis pipeline', async () => 42, { 'db.system': 'redis' });
    await expect(
      call.child('redis pipeline', async () => Promise.reject(new Error('connection refused'))),
    ).rejects.toThrow();
    call.end();
    await tracing.forceFlush();
    expect(result).toBe(42);

    expect(received[0]?.headers['x-api-key']).toBe('secret');
    const attrs = Object.fromEntries(
      received[0]?.body.resourceSpans[0]?.resource.attributes.map((a) => [a.key, a.value.stringValue]) ?? [],
    );
    expect(attrs).toMatchObject({
      'service.name': 'rl-test',
      'service.namespace': 'edge',
      'service.instance.id': 'instance-1',
    });

    const all = spans();
    const server = all.find((s) => s.name === 'ShouldRateLimit');
    expect(server).toMatchObject({ traceId: INCOMING_TRACE, parentSpanId: INCOMING_SPAN, kind: 2 });
    const backend = all.filter((s) => s.name === 'redis pipeline');
    expect(backend).toHaveLength(2);
    for (const b of backend)
      expect(b).toMatchObject({ traceId: INCOMING_TRACE, parentSpanId: server?.spanId, kind: 3 });
    expect(backend.some((b) => b.status?.code === 2 && b.status.message === 'connection refused')).toBe(true);
    await tracing.shutdown();
  });

  it('starts a new trace from HTTP headers without traceparent, and samples nothing at rate 0', async () => {
    const on = createTracing(
      parseObservabilitySettings({
        TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiverUrl}/v1/traces`,
      }).tracing,
    );
    const call = on.startCallSpan('POST /json', { 'content-type': 'application/json' });
    call.end();
    await on.forceFlush();
    expect(spans()).toHaveLength(1);
    expect(spans()[0]?.traceId).toBe(call.traceId);
    expect(spans()[0]?.parentSpanId ?? '').toBe('');
    await on.shutdown();

    receiver.clear();
    const off = createTracing(
      parseObservabilitySettings({
        TRACING_ENABLED: 'true',
        TRACING_SAMPLING_RATE: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      }).tracing,
    );
    off.startCallSpan('ShouldRateLimit', {}).end();
    await off.forceFlush();
    expect(spans()).toHaveLength(0);
    await off.shutdown();
  });

  it('TRACING_ENABLED=false records nothing and still runs the backend call', async () => {
    const tracing = createTracing(
      parseObservabilitySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl }).tracing,
    );
    const call = tracing.startCallSpan('ShouldRateLimit', {
      traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`,
    });
    expect(await call.child('redis', async () => 'ok')).toBe('ok');
    call.end();
    await tracing.forceFlush();
    expect(received).toHaveLength(0);
  });
});

describe('tracing over OTLP/gRPC', () => {
  it('TRACING_EXPORTER_PROTOCOL=grpc sends the export to a gRPC TraceService', async () => {
    const bodies: Buffer[] = [];
    const server = new grpc.Server();
    const identity = (b: Buffer): Buffer => b;
    server.addService(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: identity,
          requestDeserialize: identity,
          responseSerialize: identity,
          responseDeserialize: identity,
        },
      },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          bodies.push(call.request);
          callback(null, Buffer.alloc(0));
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    try {
      const tracing = createTracing(
        parseObservabilitySettings({
          TRACING_ENABLED: 'true',
          TRACING_EXPORTER_PROTOCOL: 'grpc',
          TRACING_SERVICE_NAME: 'rl-grpc-test',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        }).tracing,
      );
      tracing.startCallSpan('ShouldRateLimit').end();
      await tracing.forceFlush();
      await tracing.shutdown();
      expect(bodies).toHaveLength(1);
      const text = bodies[0]?.toString('latin1') ?? '';
      expect(text).toContain('rl-grpc-test');
      expect(text).toContain('ShouldRateLimit');
    } finally {
      server.forceShutdown();
    }
  });
});
