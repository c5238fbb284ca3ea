import { bool, type Env, integer, optionalText, ratio, SettingError, text } from './env.js';

/**
 * Listener, decision and health settings (spec "gRPC server", "HTTP server", "Statistics ...").
 * Logging, connection age, TLS, DISABLE_STATS and stats sinks are parsed by `settings/observability.ts`.
 */
export interface ServerSettings {
  /** `HOST`. @default 127.0.0.1 (loopback only; `0.0.0.0` opens it) */
  host: string;
  /** `PORT`. @default 8080 */
  port: number;
  /** `GRPC_HOST`. @default 127.0.0.1 (loopback only; `0.0.0.0` opens it) */
  grpcHost: string;
  /** `GRPC_PORT`. @default 8081 */
  grpcPort: number;
  /** `GRPC_UDS`: serve gRPC on this unix socket path instead of host:port. */
  grpcUds: string | undefined;
  /** `LIMIT_RESPONSE_HEADERS_ENABLED` with `LIMIT_LIMIT_HEADER`, `LIMIT_REMAINING_HEADER`, `LIMIT_RESET_HEADER`. */
  responseHeaders: { limit: string; remaining: string; reset: string } | undefined;
  /** `SHADOW_MODE`. @default false */
  globalShadowMode: boolean;
  /** `NEAR_LIMIT_RATIO`. @default 0.8 */
  nearLimitRatio: number;
  /** `HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED`. @default false */
  healthyWithAtLeastOneConfigLoaded: boolean;
  /**
   * `QUOTA_MODE`: global quota mode; an OVER_LIMIT of a `quota_mode` rule never makes the overall
   * code OVER_LIMIT (the reference's GlobalQuotaMode). @default false
   */
  globalQuotaMode: boolean;
  /** `RESPONSE_DYNAMIC_METADATA`: put the matched rules' `metadata` in the response's dynamic_metadata. @default false */
  responseDynamicMetadata: boolean;
  /** `WORKERS`: processes sharing the listening ports (needs a shared backend). @default 1 */
  workers: number;
  /**
   * `LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED`: `x-ratelimit-limit`, `x-ratelimit-remaining` and
   * `x-ratelimit-reset` with one comma-separated value per descriptor with a limit (request order),
   * and `retry-after` on an OVER_LIMIT answer. @default false
   */
  allDescriptorsHeaders: boolean;
  /**
   * `SLIDING_WINDOW_SUB_WINDOWS`: whole sub-windows a sliding window is counted in (a divisor of
   * 1000, so every window of whole seconds splits into whole milliseconds). @default 10
   */
  slidingWindowSubWindows: number;
}

/** Sub-window counts that divide 1000 (every window is whole seconds, so sub-windows are whole ms). */
const SUB_WINDOW_COUNTS = [2, 4, 5, 8, 10, 20, 25, 40, 50, 100];

export function parseServerSettings(env: Env): ServerSettings {
  const headersEnabled = bool(env, 'LIMIT_RESPONSE_HEADERS_ENABLED', false);
  return {
    host: text(env, 'HOST', '127.0.0.1'),
    port: integer(env, 'PORT', 8080, 0, 65535),
    grpcHost: text(env, 'GRPC_HOST', '127.0.0.1'),
    grpcPort: integer(env, 'GRPC_PORT', 8081, 0, 65535),
    grpcUds: optionalText(env, 'GRPC_UDS'),
    responseHeaders: headersEnabled
      ? {
          limit: text(env, 'LIMIT_LIMIT_HEADER', 'RateLimit-Limit'),
          remaining: text(env, 'LIMIT_REMAINING_HEADER', 'RateLimit-Remaining'),
          reset: text(env, 'LIMIT_RESET_HEADER', 'RateLimit-Reset'),
        }
      : undefined,
    globalShadowMode: bool(env, 'SHADOW_MODE', false),
    nearLimitRatio: ratio(env, 'NEAR_LIMIT_RATIO', 0.8),
    healthyWithAtLeastOneConfigLoaded: bool(env, 'HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', false),
    globalQuotaMode: bool(env, 'QUOTA_MODE', false),
    responseDynamicMetadata: bool(env, 'RESPONSE_DYNAMIC_METADATA', false),
    workers: integer(env, 'WORKERS', 1, 1, 64),
    allDescriptorsHeaders: bool(env, 'LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED', false),
    slidingWindowSubWindows: subWindows(env),
  };
}

function subWindows(env: Env): number {
  const n = integer(env, 'SLIDING_WINDOW_SUB_WINDOWS', 10, 2, 100);
  if (!SUB_WINDOW_COUNTS.includes(n)) {
    throw new SettingError(
      `SLIDING_WINDOW_SUB_WINDOWS must divide 1000 (one of ${SUB_WINDOW_COUNTS.join(', ')}), got ${n}`,
    );
  }
  return n;
}
