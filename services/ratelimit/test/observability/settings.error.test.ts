import { describe, expect, it } from 'vitest';
import { parseDurationMs } from '../../src/settings/duration.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';

describe('parseObservabilitySettings', () => {
  it('gives the defaults of the spec with an empty environment', () => {
    const s = parseObservabilitySettings({});
    expect(s.stats).toMatchObject({
      useStatsd: true,
      statsdHost: 'localhost',
      statsdPort: 8125,
      flushIntervalMs: 10_000,
      disabled: false,
    });
    expect(s.pullMetrics).toMatchObject({ enabled: false, host: undefined, port: 9090, path: '/metrics' });
    expect(s.debug).toEqual({ host: '127.0.0.1', port: 6070 });
    expect(s.log).toEqual({ level: 'warn', format: undefined, color: undefined });
    expect(s.grpcServer).toMatchObject({
      maxConnectionAgeMs: 86_400_000,
      maxConnectionAgeGraceMs: 3_600_000,
    });
    expect(s.pullMetrics.responseTimeAsMilliseconds).toBe(false);
    expect(s.tracing).toMatchObject({
      enabled: false,
      protocol: 'http',
      serviceName: 'RateLimit',
      serviceNamespace: '',
      samplingRate: 1,
    });
    expect(s.tracing.serviceInstanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.xds).toMatchObject({
      enabled: false,
      nodeId: 'default',
      serverUrl: 'localhost:18000',
      connectRetryIntervalMs: 3_000,
      backoffInitialMs: 10_000,
      backoffMaxMs: 60_000,
      backoffRandomFactor: 0.5,
      backoffJitter: true,
    });
    expect(Object.isFrozen(s)).toBe(true);
  });

  it.each([
    ['USE_STATSD', 'yes'],
    ['STATSD_PORT', '70000'],
    ['STATS_FLUSH_INTERVAL', '10'],
    ['PULLMETRICS_ADDR', 'localhost'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'xml'],
    ['TRACING_EXPORTER_PROTOCOL', 'zipkin'],
    ['TRACING_SAMPLING_RATE', '1.5'],
    ['CONFIG_TYPE', 'ETCD'],
    ['EXTRA_TAGS', 'novalue'],
    ['GRPC_MAX_CONNECTION_AGE', 'forever'],
    ['XDS_CLIENT_BACKOFF_RANDOM_FACTOR', 'x'],
  ])('rejects %s=%s naming the setting', (name, value) => {
    expect(() => parseObservabilitySettings({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });

  it('requires the certificate and key with GRPC_SERVER_USE_TLS and TLS for mutual TLS', () => {
    expect(() =>
      parseObservabilitySettings({ GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_KEY: 'k' }),
    ).toThrow(/^GRPC_SERVER_TLS_CERT: /);
    expect(() => parseObservabilitySettings({ GRPC_CLIENT_TLS_CACERT: 'ca.pem' })).toThrow(
      /^GRPC_CLIENT_TLS_CACERT: /,
    );
  });

  it('requires a pattern and a name for every listed mogrifier and a valid regex', () => {
    expect(() => parseObservabilitySettings({ EXT_STATSD_MOGRIFIERS: 'A' })).toThrow(
      /^EXT_STATSD_MOGRIFIERS_A_PATTERN: /,
    );
    expect(() =>
      parseObservabilitySettings({ EXT_STATSD_MOGRIFIERS: 'A', EXT_STATSD_MOGRIFIERS_A_PATTERN: '(' }),
    ).toThrow(/^EXT_STATSD_MOGRIFIERS_A_PATTERN: invalid regular expression/);
  });

  it('reads the OTLP endpoint, headers and xDS extra headers', () => {
    const s = parseObservabilitySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=x=y',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'x-token:abc,x-tenant:t1',
      PULLMETRICS_ADDR: '127.0.0.1:9191',
    });
    expect(s.tracing.otlp.endpoint).toBe('http://collector:4318/v1/traces');
    expect(s.tracing.otlp.headers).toEqual({ a: '1', b: 'x=y' });
    expect(s.xds.enabled).toBe(true);
    expect(s.xds.additionalHeaders).toEqual([
      ['x-token', 'abc'],
      ['x-tenant', 't1'],
    ]);
    expect(s.pullMetrics).toMatchObject({ host: '127.0.0.1', port: 9191 });
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['0', 0],
  ])('%s is %d ms', (text, ms) => expect(parseDurationMs(text)).toBe(ms));
  it.each(['', '10', 's', '1x', '1s 2s'])('%s is not a duration', (text) =>
    expect(parseDurationMs(text)).toBeNull(),
  );
});
