import { type Logger, pino } from 'pino';
import { MemoryBackend } from '../src/backends/memory.js';
import type { CounterBackend } from '../src/backends/types.js';
import { LocalOverLimitCache } from '../src/limiter/local-cache.js';
import { RateLimiter } from '../src/limiter/rate-limiter.js';
import { type CallResult, RateLimitService } from '../src/limiter/service.js';
import type { RateLimitRequest, RequestDescriptor } from '../src/proto/messages.js';
import { buildConfig, type RateLimitConfig } from '../src/rules/config-tree.js';
import { StatsRegistry } from '../src/stats/registry.js';

/** Builds a config from YAML texts (named `config.file<i>.yaml`) or throws with the error. */
export function configOf(registry: StatsRegistry, ...texts: string[]): RateLimitConfig {
  const built = buildConfig(
    texts.map((text, i) => ({ name: `config.file${i}.yaml`, text })),
    registry,
    { mergeDomainConfig: false },
  );
  if (!built.ok) throw new Error(built.error);
  return built.config;
}

export function desc(
  pairs: Record<string, string> | [string, string][],
  extra: Partial<RequestDescriptor> = {},
): RequestDescriptor {
  const list = Array.isArray(pairs) ? pairs : Object.entries(pairs);
  return { entries: list.map(([key, value]) => ({ key, value })), ...extra };
}

export function req(domain: string, descriptors: RequestDescriptor[], hitsAddend = 0): RateLimitRequest {
  return { domain, descriptors, hitsAddend };
}

export interface Harness {
  registry: StatsRegistry;
  backend: CounterBackend;
  service: RateLimitService;
  /**
   * Seconds since the epoch used by the service; change it to move the clock. `ms`, when set, is
   * the clock in milliseconds instead (the sliding window's and token bucket's precision).
   */
  clock: { now: number; ms?: number };
  call(request: RateLimitRequest): Promise<CallResult>;
  counter(name: string): number;
  setConfig(config: RateLimitConfig | undefined): void;
}

export interface HarnessOptions {
  backend?: CounterBackend;
  nearLimitRatio?: number;
  globalShadowMode?: boolean;
  headers?: boolean;
  cacheKeyPrefix?: string;
  failureMode?: 'error' | 'allow' | 'deny';
  /** LOCAL_CACHE_SIZE_IN_BYTES. */
  localCacheBytes?: number;
  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT. */
  stopIncrement?: boolean;
  /** Start time in seconds. @default 1_000_020 (20 s into a minute window) */
  now?: number;
  /** LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED. */
  allDescriptorsHeaders?: boolean;
  /** SLIDING_WINDOW_SUB_WINDOWS. @default 10 */
  subWindows?: number;
  /** EXPIRATION_JITTER_MAX_SECONDS, with `random` choosing the jitter. @default 0 */
  expirationJitterMaxSeconds?: number;
  /** @default () => 0 */
  random?: () => number;
  /** @default a silent logger */
  logger?: Logger;
}

/** A decision service over a real backend (the in-process store unless given) and a fixed clock. */
export function harness(yaml: string | string[] | undefined, options: HarnessOptions = {}): Harness {
  const registry = new StatsRegistry();
  const clock: { now: number; ms?: number } = { now: options.now ?? 1_000_020 };
  const nowMs = (): number => clock.ms ?? clock.now * 1000;
  const backend = options.backend ?? new MemoryBackend({ now: nowMs });
  let config = yaml === undefined ? undefined : configOf(registry, ...(Array.isArray(yaml) ? yaml : [yaml]));
  const service = new RateLimitService({
    limiter: new RateLimiter({
      backend,
      nearLimitRatio: options.nearLimitRatio ?? 0.8,
      expirationJitterMaxSeconds: options.expirationJitterMaxSeconds ?? 0,
      random: options.random ?? (() => 0),
      slidingWindowSubWindows: options.subWindows ?? 10,
      localCache: options.localCacheBytes ? new LocalOverLimitCache(options.localCacheBytes) : undefined,
      stopIncrementWhenOverLimit: options.stopIncrement ?? false,
    }),
    registry,
    cacheKeyPrefix: options.cacheKeyPrefix ?? '',
    currentConfig: () => config,
    nowSeconds: () => clock.now,
    nowMs,
    failureMode: options.failureMode ?? 'error',
    globalShadowMode: options.globalShadowMode ?? false,
    headers: options.headers
      ? { limit: 'RateLimit-Limit', remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset' }
      : undefined,
    allDescriptorsHeaders: options.allDescriptorsHeaders ?? false,
    logger: options.logger ?? pino({ level: 'silent' }),
  });
  return {
    registry,
    backend,
    service,
    clock,
    call: async (request) => service.shouldRateLimit(request),
    counter: (name) => registry.snapshot().counters.get(name) ?? 0,
    setConfig: (c) => {
      config = c;
    },
  };
}

/** Calls and returns the response, failing the test on a call error. */
export async function ok(h: Harness, request: RateLimitRequest) {
  const result = await h.call(request);
  if (!result.ok) throw new Error(`call failed: ${result.error.message}`);
  return result.response;
}
