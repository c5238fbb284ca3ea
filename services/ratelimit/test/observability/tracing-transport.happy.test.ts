import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/backends/memory.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { createTracing, type Tracing } from '../../src/tracing/tracing.js';
import { instrumentHttpServer, traceBackend, tracingInterceptor } from '../../src/tracing/transport.js';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const identity = (b: Buffer): Buffer => b;
const op = (key: string) => ({ key, hits: 1, ttlSeconds: 60, perSecond: false });

let receiver: OtlpReceiver;
let tracing: Tracing;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = createTracing(
    parseObservabilitySettings({ TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
      .tracing,
  );
});
afterAll(async () => {
  await tracing.shutdown();
  await receiver.close();
});
beforeEach(() => receiver.clear());

describe('tracing around the transports and the backend', () => {
  it('gRPC: the interceptor opens the call span from metadata; backend round trips become its children', async () => {
    const backend = traceBackend(new MemoryBackend(), tracing);
    const server = new grpc.Server({ interceptors: [tracingInterceptor(tracing)] });
    server.addService(
      {
        ShouldRateLimit: {
          path: '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          requestStream: false,
          responseStream: false,
          requestSerialize: identity,
          requestDeserialize: identity,
          responseSerialize: identity,
          responseDeserialize: identity,
        },
      },
      {
        ShouldRateLimit: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          // like the core: an async decision that awaits the backend twice
          void (async () => {
            const [n] = await backend.increment([op(call.request.toString())]);
            await backend.read([op('other')]);
            cb(null, Buffer.from(String(n)));
          })();
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    try {
      const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const metadata = new grpc.Metadata();
      metadata.set('traceparent', `00-${TRACE}-${PARENT}-01`);
      const reply = await new Promise<string>((resolve, reject) =>
        client.makeUnaryRequest(
          '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          identity,
          identity,
          Buffer.from('k1'),
          metadata,
          (e, r) => (e ? reject(e) : resolve(r?.toString() ?? '')),
        ),
      );
      client.close();
      expect(reply).toBe('1');
      await tracing.forceFlush();
      const spans = receiver.spans();
      const call = spans.find((s) => s.name === 'ShouldRateLimit');
      expect(call).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, kind: 2 });
      const children = spans.filter((s) => s.name.startsWith('backend '));
      expect(children.map((s) => s.name).sort()).toEqual(['backend increment', 'backend read']);
      for (const c of children)
        expect(c).toMatchObject({ traceId: TRACE, parentSpanId: call?.spanId, kind: 3 });
      // outside a call, the backend opens no span
      await backend.increment([op('k1')]);
      await tracing.forceFlush();
      expect(receiver.spans().filter((s) => s.name.startsWith('backend '))).toHaveLength(2);
    } finally {
      server.forceShutdown();
      await backend.close();
    }
  });

  it('HTTP: /json requests run in a span continuing the traceparent header', async () => {
    const backend = traceBackend(new MemoryBackend(), tracing);
    const server: Server = createServer((req, res) => {
      void backend
        .increment([op('h')])
        .then(() => res.writeHead(req.url === '/json' ? 429 : 200).end('done'));
    });
    instrumentHttpServer(server, tracing);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await fetch(`${url}/json`, {
        method: 'POST',
        headers: { traceparent: `00-${TRACE}-${PARENT}-01` },
        body: '{}',
      });
      expect(res.status).toBe(429);
      await res.text();
      await (await fetch(`${url}/healthcheck`)).text();
      await tracing.forceFlush();
      const spans = receiver.spans();
      const call = spans.find((s) => s.name === 'POST /json');
      expect(call).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, kind: 2 });
      expect(spans.filter((s) => s.name === 'backend increment')).toEqual([
        expect.objectContaining({ parentSpanId: call?.spanId }),
      ]);
      expect(spans.some((s) => s.name.includes('healthcheck'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.close();
    }
  });
});
