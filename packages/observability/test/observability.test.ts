import { createServer } from 'node:net';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { registerHealthRoutes } from '../src/health.js';
import { startMetricsListener } from '../src/metrics-listener.js';
import { createMetricsRegistry } from '../src/registry.js';
import { registerRouteMetrics, UNMATCHED_ROUTE } from '../src/route-metrics.js';
import { parseMetricsSettings } from '../src/settings.js';
import { tracingExporterKind } from '../src/tracing.js';

describe('metrics settings', () => {
  it('defaults to loopback and the service port, takes 0 and off, refuses the rest naming the setting', () => {
    expect(parseMetricsSettings({}, 9100)).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(parseMetricsSettings({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }, 9100)).toEqual({
      host: '0.0.0.0',
      port: 0,
    });
    expect(parseMetricsSettings({ METRICS_PORT: 'off' }, 9100).port).toBe('off');
    expect(() => parseMetricsSettings({ METRICS_PORT: '70000' }, 9100)).toThrow(/METRICS_PORT/);
    expect(() => parseMetricsSettings({ METRICS_PORT: 'x' }, 9100)).toThrow(/METRICS_PORT/);
  });
});

describe('metrics listener: a port it cannot bind (issue 41)', () => {
  it('names METRICS_PORT when the port is in use, and METRICS_HOST when the address is not here', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      await expect(
        startMetricsListener(createMetricsRegistry(), { host: '127.0.0.1', port }),
      ).rejects.toThrow(`METRICS_PORT ${port} is in use: set METRICS_PORT or METRICS_PORT=0`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // 192.0.2.1: TEST-NET-1 (RFC 5737), never an address of this machine.
    await expect(
      startMetricsListener(createMetricsRegistry(), { host: '192.0.2.1', port: 0 }),
    ).rejects.toThrow('METRICS_HOST 192.0.2.1 is not an address of this machine: set METRICS_HOST');
  });
});

describe('tracing switch', () => {
  it('is off unless an OTLP endpoint or an exporter is named', () => {
    expect(tracingExporterKind({})).toBeUndefined();
    expect(tracingExporterKind({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe('otlp');
    expect(
      tracingExporterKind({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      tracingExporterKind({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'x' }),
    ).toBeUndefined();
    expect(tracingExporterKind({ OTEL_TRACES_EXPORTER: 'console' })).toBe('console');
    expect(() => tracingExporterKind({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
  });
});

describe('metrics listener, route metrics and health routes', async () => {
  const registry = createMetricsRegistry();
  const app = Fastify();
  registerRouteMetrics(app, registry);
  let dependencyUp = true;
  registerHealthRoutes(app, {
    database: async () => {
      if (!dependencyUp) throw new Error('down');
    },
  });
  app.get('/items/:id', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const publicUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const metrics = await startMetricsListener(registry, { host: '127.0.0.1', port: 0 });
  afterAll(async () => {
    await metrics.close();
    await app.close();
  });

  it('serves the registry on its own port and 404 elsewhere; the public port has no /metrics', async () => {
    expect(metrics.port).toBeGreaterThan(0);
    expect(metrics.url).toBe(`http://127.0.0.1:${metrics.port}/metrics`);
    const answer = await fetch(metrics.url as string);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    const text = await answer.text();
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(text).toContain('nodejs_heap_size_used_bytes');
    expect((await fetch(`http://127.0.0.1:${metrics.port}/other`)).status).toBe(404);
    expect((await fetch(`${publicUrl}/metrics`)).status).toBe(404);
  });

  it('labels requests by route pattern, puts unknown URLs under one label', async () => {
    await fetch(`${publicUrl}/items/1`);
    await fetch(`${publicUrl}/items/2`);
    await fetch(`${publicUrl}/nope/abc`);
    await fetch(`${publicUrl}/nope/def`);
    const text = await (await fetch(metrics.url as string)).text();
    expect(text).toContain('http_requests_total{method="GET",route="/items/:id",status_class="2xx"} 2');
    // The public /metrics probe of the first test and the two unknown URLs.
    expect(text).toContain(
      `http_requests_total{method="GET",route="${UNMATCHED_ROUTE}",status_class="4xx"} 3`,
    );
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/items/:id"} 2');
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/items/:id"} 2',
    );
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).not.toContain('/items/1');
    expect(text).not.toContain('/nope');
  });

  it('answers live always and ready only while the dependency answers', async () => {
    expect(await (await fetch(`${publicUrl}/health/live`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${publicUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    dependencyUp = false;
    const down = await fetch(`${publicUrl}/health/ready`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { database: 'failed' } });
    dependencyUp = true;
  });
});
