import { randomUUID } from 'node:crypto';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import {
  bool,
  duration,
  type Env,
  hostPort,
  int,
  optional,
  pairs,
  ratio,
  SettingError,
  str,
} from './observability-env.js';

export { SettingError } from './observability-env.js';

/**
 * Settings of the operator-facing parts of the service: statistics sinks, pull metrics, the debug
 * server, logging, tracing, gRPC transport security and the configuration (xDS) server client.
 * Names and defaults follow `spec/ratelimit-service.md` ("Statistics, logging and tracing settings",
 * "Authentication", "Configuration loading"); `docs/observability.md` lists every one.
 * The caller (`config.ts`) passes the environment in; nothing here reads `process.env`.
 */
export interface Mogrifier {
  /** The name given in `EXT_STATSD_MOGRIFIERS`. */
  readonly name: string;
  readonly pattern: RegExp;
  /** Template of the emitted name; `$1`.. refer to the pattern's groups. */
  readonly newName: string;
  /** `[tagName, valueTemplate]` pairs; templates may refer to groups as `$1`... */
  readonly tags: readonly (readonly [string, string])[];
}

export interface StatsSettings {
  /** `DISABLE_STATS` @default false */
  readonly disabled: boolean;
  /**
   * `STATS_MAX_DYNAMIC_KEYS`: statistics keys made from request values (a descriptor's `limit`
   * override, `detailed_metric`, `value_to_metric`, an unknown domain's `domain_not_found`) per
   * decision path; beyond them such requests count under the `_overflow` key. @default 10000
   */
  readonly maxDynamicKeys: number;
  /** `USE_STATSD`: statsd over UDP when true, standard output when false. @default true */
  readonly useStatsd: boolean;
  /** `STATSD_HOST` @default "localhost" */
  readonly statsdHost: string;
  /** `STATSD_PORT` @default 8125 */
  readonly statsdPort: number;
  /** `STATS_FLUSH_INTERVAL` @default 10s */
  readonly flushIntervalMs: number;
  /** `EXTRA_TAGS` (`k1:v1,k2:v2`) @default none */
  readonly extraTags: readonly (readonly [string, string])[];
  /** `USE_EXT_STATSD`: DogStatsD tags and mogrifiers. @default false */
  readonly useExtStatsd: boolean;
  /** `EXT_STATSD_MOGRIFIERS` and its `_PATTERN`, `_NAME`, `_TAGS` companions. */
  readonly mogrifiers: readonly Mogrifier[];
}

export interface PullMetricsSettings {
  /** `USE_PULLMETRICS` @default false */
  readonly enabled: boolean;
  /** Host part of `PULLMETRICS_ADDR`; undefined means every interface. @default ":9090" */
  readonly host: string | undefined;
  readonly port: number;
  /** `PULLMETRICS_PATH` @default "/metrics" */
  readonly path: string;
  /** `PULLMETRICS_MAPPER_YAML`: file replacing the default mapping. @default none */
  readonly mapperYamlPath: string | undefined;
  /**
   * `PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS` (the reference's PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS):
   * the default mapping's response time is observed in milliseconds instead of seconds. @default false
   */
  readonly responseTimeAsMilliseconds: boolean;
}

export interface DebugSettings {
  /** `DEBUG_HOST` @default "127.0.0.1" (loopback only; `0.0.0.0` opens it) */
  readonly host: string;
  /** `DEBUG_PORT` @default 6070 */
  readonly port: number;
}

/**
 * `LOG_LEVEL` (logrus names accepted: `warning`, `panic`) @default "warn" (the reference's);
 * `LOG_FORMAT` `json` (the specification's fields) or `pretty` (`text`, the specification's name, is
 * the same) @default pretty on a terminal, json otherwise. Parsed as in every service (`@platform/logging`).
 */
export type { LogSettings } from '@platform/logging/settings';

export interface OtlpSettings {
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces` for http). */
  readonly endpoint: string | undefined;
  /** `OTEL_EXPORTER_OTLP_HEADERS` merged with `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`). */
  readonly headers: Readonly<Record<string, string>>;
  /** `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `OTEL_EXPORTER_OTLP_TIMEOUT` in ms. @default 10000 */
  readonly timeoutMs: number;
}

export interface TracingSettings {
  /** `TRACING_ENABLED` @default false */
  readonly enabled: boolean;
  /** `TRACING_EXPORTER_PROTOCOL` @default "http" */
  readonly protocol: 'http' | 'grpc';
  /** `TRACING_SERVICE_NAME` @default "RateLimit" */
  readonly serviceName: string;
  /** `TRACING_SERVICE_NAMESPACE` @default "" */
  readonly serviceNamespace: string;
  /** `TRACING_SERVICE_INSTANCE_ID` @default a random version 4 UUID */
  readonly serviceInstanceId: string;
  /** `TRACING_SAMPLING_RATE` 0..1 @default 1 */
  readonly samplingRate: number;
  readonly otlp: OtlpSettings;
}

export interface GrpcServerSettings {
  /** `GRPC_SERVER_USE_TLS` @default false */
  readonly useTls: boolean;
  /** `GRPC_SERVER_TLS_CERT`: certificate chain file, watched. */
  readonly certFile: string | undefined;
  /** `GRPC_SERVER_TLS_KEY`: private key file, watched. */
  readonly keyFile: string | undefined;
  /** `GRPC_CLIENT_TLS_CACERT`: CA of client certificates; set means mutual TLS. */
  readonly clientCaFile: string | undefined;
  /** `GRPC_CLIENT_TLS_SAN`: DNS name a client certificate must carry. */
  readonly clientSan: string | undefined;
  /** `GRPC_MAX_CONNECTION_AGE` (+/-10% jitter applied by grpc-js); 0 is unlimited. @default 24h (the reference's) */
  readonly maxConnectionAgeMs: number;
  /** `GRPC_MAX_CONNECTION_AGE_GRACE`; 0 is unlimited. @default 1h (the reference's) */
  readonly maxConnectionAgeGraceMs: number;
}

export interface XdsSettings {
  /** `CONFIG_TYPE=GRPC_XDS_SOTW` (`FILE` is the default). */
  readonly enabled: boolean;
  /** `CONFIG_GRPC_XDS_NODE_ID` @default "default" */
  readonly nodeId: string;
  /**
   * `CONFIG_GRPC_XDS_NODE_METADATA`: `k1=v1,k2=v2`, sent as the node's metadata (string values).
   * Entries without `=` are skipped, as the reference does. @default none
   */
  readonly nodeMetadata: readonly (readonly [string, string])[];
  /** `CONFIG_GRPC_XDS_SERVER_URL` @default "localhost:18000" */
  readonly serverUrl: string;
  /** `CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL`: how long one attempt waits for the channel. @default 3s */
  readonly connectRetryIntervalMs: number;
  /** `XDS_CLIENT_BACKOFF_JITTER` @default true */
  readonly backoffJitter: boolean;
  /** `XDS_CLIENT_BACKOFF_INITIAL_INTERVAL` @default 10s */
  readonly backoffInitialMs: number;
  /** `XDS_CLIENT_BACKOFF_MAX_INTERVAL` @default 60s */
  readonly backoffMaxMs: number;
  /** `XDS_CLIENT_BACKOFF_RANDOM_FACTOR` @default 0.5 */
  readonly backoffRandomFactor: number;
  /** `XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES` @default 4194304 (the gRPC default) */
  readonly maxMsgSizeBytes: number;
  /** `CONFIG_GRPC_XDS_SERVER_USE_TLS` @default false */
  readonly useTls: boolean;
  /** `CONFIG_GRPC_XDS_CLIENT_TLS_CERT` */
  readonly clientCertFile: string | undefined;
  /** `CONFIG_GRPC_XDS_CLIENT_TLS_KEY` */
  readonly clientKeyFile: string | undefined;
  /** `CONFIG_GRPC_XDS_SERVER_TLS_CACERT` */
  readonly serverCaFile: string | undefined;
  /** `CONFIG_GRPC_XDS_SERVER_TLS_SAN` */
  readonly serverSan: string | undefined;
  /** `CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS` (`k1:v1,k2:v2`) */
  readonly additionalHeaders: readonly (readonly [string, string])[];
}

export interface ObservabilitySettings {
  readonly stats: StatsSettings;
  readonly pullMetrics: PullMetricsSettings;
  readonly debug: DebugSettings;
  readonly log: LogSettings;
  readonly tracing: TracingSettings;
  readonly grpcServer: GrpcServerSettings;
  readonly xds: XdsSettings;
}

function mogrifiers(env: Env): Mogrifier[] {
  const names = optional(env, 'EXT_STATSD_MOGRIFIERS');
  if (names === undefined) return [];
  return names.split(',').map((raw) => {
    const name = raw.trim();
    const prefix = `EXT_STATSD_MOGRIFIERS_${name}`;
    const source = optional(env, `${prefix}_PATTERN`);
    if (source === undefined)
      throw new SettingError(`${prefix}_PATTERN`, 'is required for every listed mogrifier');
    let pattern: RegExp;
    try {
      pattern = new RegExp(source);
    } catch (error) {
      throw new SettingError(`${prefix}_PATTERN`, `invalid regular expression: ${(error as Error).message}`);
    }
    const newName = optional(env, `${prefix}_NAME`);
    if (newName === undefined)
      throw new SettingError(`${prefix}_NAME`, 'is required for every listed mogrifier');
    return { name, pattern, newName, tags: pairs(env, `${prefix}_TAGS`, ':') };
  });
}

/** The reference splits on `,` then on the first `=`, and skips entries without one. */
function nodeMetadata(value: string | undefined): [string, string][] {
  if (value === undefined) return [];
  return value.split(',').flatMap((entry) => {
    const at = entry.indexOf('=');
    return at < 0 ? [] : [[entry.slice(0, at), entry.slice(at + 1)] as [string, string]];
  });
}

function otlp(env: Env, protocol: 'http' | 'grpc'): OtlpSettings {
  const base = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const signal = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  let endpoint = signal;
  if (endpoint === undefined && base !== undefined) {
    endpoint = protocol === 'http' ? `${base.replace(/\/+$/, '')}/v1/traces` : base;
  }
  const headers = Object.fromEntries([
    ...pairs(env, 'OTEL_EXPORTER_OTLP_HEADERS', '='),
    ...pairs(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', '='),
  ]);
  const timeoutName = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT
    ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'
    : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  return { endpoint, headers, timeoutMs: int(env, timeoutName, 10_000, 1, 3_600_000) };
}

export function parseObservabilitySettings(env: Env): ObservabilitySettings {
  const log = parseLogSettings(env, {
    level: 'warn',
    fail: (setting, detail) => new SettingError(setting, detail),
  });
  const protocol = str(env, 'TRACING_EXPORTER_PROTOCOL', 'http').toLowerCase();
  if (protocol !== 'http' && protocol !== 'grpc') {
    throw new SettingError(
      'TRACING_EXPORTER_PROTOCOL',
      `expected http or grpc, got '${env.TRACING_EXPORTER_PROTOCOL}'`,
    );
  }
  const configType = str(env, 'CONFIG_TYPE', 'FILE').toUpperCase();
  if (configType !== 'FILE' && configType !== 'GRPC_XDS_SOTW') {
    throw new SettingError('CONFIG_TYPE', `expected FILE or GRPC_XDS_SOTW, got '${env.CONFIG_TYPE}'`);
  }
  const pull = hostPort(env, 'PULLMETRICS_ADDR', ':9090');
  const pullPath = str(env, 'PULLMETRICS_PATH', '/metrics');
  if (!pullPath.startsWith('/'))
    throw new SettingError('PULLMETRICS_PATH', `must start with '/', got '${pullPath}'`);

  const grpcServer: GrpcServerSettings = {
    useTls: bool(env, 'GRPC_SERVER_USE_TLS', false),
    certFile: optional(env, 'GRPC_SERVER_TLS_CERT'),
    keyFile: optional(env, 'GRPC_SERVER_TLS_KEY'),
    clientCaFile: optional(env, 'GRPC_CLIENT_TLS_CACERT'),
    clientSan: optional(env, 'GRPC_CLIENT_TLS_SAN'),
    maxConnectionAgeMs: duration(env, 'GRPC_MAX_CONNECTION_AGE', '24h'),
    maxConnectionAgeGraceMs: duration(env, 'GRPC_MAX_CONNECTION_AGE_GRACE', '1h'),
  };
  if (grpcServer.useTls && (grpcServer.certFile === undefined || grpcServer.keyFile === undefined)) {
    throw new SettingError(
      grpcServer.certFile === undefined ? 'GRPC_SERVER_TLS_CERT' : 'GRPC_SERVER_TLS_KEY',
      'is required when GRPC_SERVER_USE_TLS is true',
    );
  }
  if (!grpcServer.useTls && grpcServer.clientCaFile !== undefined) {
    throw new SettingError('GRPC_CLIENT_TLS_CACERT', 'mutual TLS requires GRPC_SERVER_USE_TLS=true');
  }
  if (grpcServer.clientSan !== undefined && grpcServer.clientCaFile === undefined) {
    throw new SettingError('GRPC_CLIENT_TLS_SAN', 'requires GRPC_CLIENT_TLS_CACERT (mutual TLS)');
  }

  const xds: XdsSettings = {
    enabled: configType === 'GRPC_XDS_SOTW',
    nodeId: str(env, 'CONFIG_GRPC_XDS_NODE_ID', 'default'),
    nodeMetadata: nodeMetadata(optional(env, 'CONFIG_GRPC_XDS_NODE_METADATA')),
    serverUrl: str(env, 'CONFIG_GRPC_XDS_SERVER_URL', 'localhost:18000'),
    connectRetryIntervalMs: duration(env, 'CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL', '3s'),
    backoffJitter: bool(env, 'XDS_CLIENT_BACKOFF_JITTER', true),
    backoffInitialMs: duration(env, 'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL', '10s'),
    backoffMaxMs: duration(env, 'XDS_CLIENT_BACKOFF_MAX_INTERVAL', '60s'),
    backoffRandomFactor: ratio(env, 'XDS_CLIENT_BACKOFF_RANDOM_FACTOR', 0.5),
    maxMsgSizeBytes: int(env, 'XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES', 4 * 1024 * 1024, 1, 2 ** 31 - 1),
    useTls: bool(env, 'CONFIG_GRPC_XDS_SERVER_USE_TLS', false),
    clientCertFile: optional(env, 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT'),
    clientKeyFile: optional(env, 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY'),
    serverCaFile: optional(env, 'CONFIG_GRPC_XDS_SERVER_TLS_CACERT'),
    serverSan: optional(env, 'CONFIG_GRPC_XDS_SERVER_TLS_SAN'),
    additionalHeaders: pairs(env, 'CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS', ':'),
  };
  if (xds.backoffMaxMs < xds.backoffInitialMs) {
    throw new SettingError(
      'XDS_CLIENT_BACKOFF_MAX_INTERVAL',
      'must not be shorter than XDS_CLIENT_BACKOFF_INITIAL_INTERVAL',
    );
  }
  if ((xds.clientCertFile === undefined) !== (xds.clientKeyFile === undefined)) {
    throw new SettingError(
      xds.clientCertFile === undefined ? 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT' : 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY',
      'client certificate and key must be given together',
    );
  }

  const flushIntervalMs = duration(env, 'STATS_FLUSH_INTERVAL', '10s');
  if (flushIntervalMs <= 0) throw new SettingError('STATS_FLUSH_INTERVAL', 'must be greater than zero');

  return Object.freeze({
    stats: Object.freeze({
      disabled: bool(env, 'DISABLE_STATS', false),
      maxDynamicKeys: int(env, 'STATS_MAX_DYNAMIC_KEYS', 10_000, 0, 10_000_000),
      useStatsd: bool(env, 'USE_STATSD', true),
      statsdHost: str(env, 'STATSD_HOST', 'localhost'),
      statsdPort: int(env, 'STATSD_PORT', 8125, 1, 65_535),
      flushIntervalMs,
      extraTags: pairs(env, 'EXTRA_TAGS', ':'),
      useExtStatsd: bool(env, 'USE_EXT_STATSD', false),
      mogrifiers: mogrifiers(env),
    }),
    pullMetrics: Object.freeze({
      enabled: bool(env, 'USE_PULLMETRICS', false),
      host: pull.host,
      port: pull.port,
      path: pullPath,
      mapperYamlPath: optional(env, 'PULLMETRICS_MAPPER_YAML'),
      responseTimeAsMilliseconds: bool(env, 'PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS', false),
    }),
    debug: Object.freeze({
      host: str(env, 'DEBUG_HOST', '127.0.0.1'),
      port: int(env, 'DEBUG_PORT', 6070, 0, 65_535),
    }),
    log,
    tracing: Object.freeze({
      enabled: bool(env, 'TRACING_ENABLED', false),
      protocol,
      serviceName: str(env, 'TRACING_SERVICE_NAME', 'RateLimit'),
      serviceNamespace: str(env, 'TRACING_SERVICE_NAMESPACE', ''),
      serviceInstanceId: str(env, 'TRACING_SERVICE_INSTANCE_ID', randomUUID()),
      samplingRate: ratio(env, 'TRACING_SAMPLING_RATE', 1),
      otlp: otlp(env, protocol),
    }),
    grpcServer: Object.freeze(grpcServer),
    xds: Object.freeze(xds),
  });
}
