import type { Server as HttpServer } from 'node:http';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { createBackend } from './backends/create.js';
import { waitForRedis } from './backends/startup.js';
import type { CounterBackend } from './backends/types.js';
import type { Settings } from './config.js';
import { Health } from './health/health.js';
import { LocalOverLimitCache } from './limiter/local-cache.js';
import { RateLimiter } from './limiter/rate-limiter.js';
import { RateLimitService } from './limiter/service.js';
import { createLogger } from './logging/logger.js';
import { createQuotaStore } from './rlqs/create-store.js';
import { rateLimitQuotaHandlers, unavailableQuotaHandlers } from './rlqs/grpc.js';
import { RateLimitQuotaService } from './rlqs/service.js';
import type { RateLimitConfig } from './rules/config-tree.js';
import { ConfigManager } from './runtime/config-manager.js';
import type { XdsConfigClient } from './runtime/xds/client.js';
import { configDirectory, runtimeDirectory } from './settings/runtime.js';
import { StatsRegistry } from './stats/registry.js';
import { createTracing } from './tracing/tracing.js';
import { instrumentHttpServer, traceBackend, tracingInterceptor } from './tracing/transport.js';
import { createGrpcServer, shutdownGrpc } from './transport/grpc-server.js';
import { grpcServerOptions } from './transport/grpc-tls.js';
import { closeHttp, createHttpServer } from './transport/http-server.js';

/**
 * Wiring of the service by hand, with no side effects until `start()`: settings in; the stats
 * registry, health, config manager, backend, limiter, decision service and both servers out.
 */
export interface AppOptions {
  logger?: Logger;
  registry?: StatsRegistry;
  /** Replaces the backend the settings describe (tests). */
  backend?: CounterBackend;
  /** Milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** @default Math.random */
  random?: () => number;
}

export interface App {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly registry: StatsRegistry;
  readonly health: Health;
  readonly backend: CounterBackend;
  readonly configManager: ConfigManager;
  readonly service: RateLimitService;
  /** The Rate Limit Quota Service (RLQS_ENABLED, and a backend that can hold its state). */
  readonly quota: RateLimitQuotaService | undefined;
  readonly grpcServer: grpc.Server;
  readonly httpServer: HttpServer;
  /** The rule config in force (undefined before the first successful load). */
  currentConfig(): RateLimitConfig | undefined;
  /** The `/rlconfig` listing of the config in force. */
  configDump(): string;
  /**
   * Loads the initial config (waiting for a valid one unless FORCE_START_WITHOUT_INITIAL_CONFIG),
   * starts watching and connects the backend. Listening is left to the caller (server.ts).
   */
  prepare(): Promise<void>;
  /** Marks the service unhealthy (termination signal received). */
  markTerminating(): void;
  /** Stops both servers (in-flight calls finish, bounded by `graceMs`), then the backend and watcher. */
  close(graceMs?: number): Promise<void>;
}

export function buildApp(settings: Settings, options: AppOptions = {}): App {
  const logger = options.logger ?? createLogger(settings.observability.log);
  const registry =
    options.registry ??
    new StatsRegistry(settings.observability.stats.disabled, settings.observability.stats.maxDynamicKeys);
  const now = options.now ?? Date.now;
  const health = new Health();
  const tracing = createTracing(settings.observability.tracing);
  const backend = traceBackend(
    options.backend ?? createBackend(settings.backend, undefined, registry, logger),
    tracing,
  );
  backend.onHealthChange((ok) => {
    health.set('backend', ok);
    logger[ok ? 'info' : 'warn'](
      { backend: backend.description },
      ok ? 'cache backend healthy' : 'cache backend unhealthy',
    );
  });
  const runtime = settings.runtime;
  const configManager = new ConfigManager({
    root: runtime.root,
    runtimeDir: runtimeDirectory(runtime),
    configDir: configDirectory(runtime),
    ignoreDotFiles: runtime.ignoreDotFiles,
    yamlOnly: runtime.yamlOnly,
    watchRoot: runtime.watchRoot,
    mergeDomainConfig: runtime.mergeDomainConfig,
    algorithmSupport: { backend: settings.backend.type, supported: backend.algorithms },
    registry,
    logger,
  });
  const trackConfigHealth = settings.server.healthyWithAtLeastOneConfigLoaded;
  if (trackConfigHealth) {
    health.set('config', false);
    configManager.onChange(() => health.set('config', configManager.domainCount() > 0));
  }
  const limiter = new RateLimiter({
    backend,
    nearLimitRatio: settings.server.nearLimitRatio,
    expirationJitterMaxSeconds: settings.backend.expirationJitterMaxSeconds,
    random: options.random ?? Math.random,
    slidingWindowSubWindows: settings.server.slidingWindowSubWindows,
    localCache:
      settings.backend.localCacheSizeInBytes > 0
        ? new LocalOverLimitCache(settings.backend.localCacheSizeInBytes, registry)
        : undefined,
    // The reference's memcached cache has no such mode: it always increments (asynchronously).
    stopIncrementWhenOverLimit:
      settings.backend.stopCacheKeyIncrementWhenOverlimit && settings.backend.type !== 'memcache',
  });
  const service = new RateLimitService({
    limiter,
    registry,
    cacheKeyPrefix: settings.backend.cacheKeyPrefix,
    currentConfig: () => configManager.current(),
    nowSeconds: () => Math.floor(now() / 1000),
    nowMs: now,
    failureMode: settings.backend.failureMode,
    globalShadowMode: settings.server.globalShadowMode,
    globalQuotaMode: settings.server.globalQuotaMode,
    responseDynamicMetadata: settings.server.responseDynamicMetadata,
    headers: settings.server.responseHeaders,
    allDescriptorsHeaders: settings.server.allDescriptorsHeaders,
    logger,
  });
  const quotaStore = settings.rlqs.enabled
    ? createQuotaStore(settings.backend, settings.rlqs.assignmentTtlSeconds * 1000)
    : undefined;
  const quota = quotaStore
    ? new RateLimitQuotaService({
        settings: settings.rlqs,
        store: quotaStore,
        currentConfig: () => configManager.current(),
        registry,
        logger,
        now,
        cacheKeyPrefix: settings.backend.cacheKeyPrefix,
        nearLimitRatio: settings.server.nearLimitRatio,
        globalShadowMode: settings.server.globalShadowMode,
        failureMode: settings.backend.failureMode,
      })
    : undefined;
  if (quota) configManager.onChange((config) => quota.reload(config));
  const grpcServer = createGrpcServer({
    service,
    health,
    registry,
    quota: quota
      ? rateLimitQuotaHandlers(quota)
      : settings.rlqs.enabled
        ? unavailableQuotaHandlers(
            'the rate limit quota service needs BACKEND_TYPE memory or redis: memcached cannot hold its shared state',
          )
        : undefined,
    options: {
      ...grpcServerOptions(settings.observability.grpcServer),
      interceptors: tracing.enabled ? [tracingInterceptor(tracing)] : [],
    },
  });
  const httpServer = createHttpServer({ service, health, logger });
  instrumentHttpServer(httpServer, tracing);
  let xds: XdsConfigClient | undefined;

  const waitForValidConfig = (): Promise<void> =>
    new Promise((resolve) => {
      if (configManager.current()) return resolve();
      logger.warn('waiting for a valid initial configuration (FORCE_START_WITHOUT_INITIAL_CONFIG=false)');
      configManager.onChange(() => resolve());
    });

  return {
    settings,
    logger,
    registry,
    health,
    backend,
    configManager,
    service,
    quota,
    grpcServer,
    httpServer,
    currentConfig: () => configManager.current(),
    configDump: () => configManager.dump(),
    async prepare() {
      // Start-up lines are logged at warn, as the reference does, so they show at its default level.
      if (settings.backend.type === 'memory' && !options.backend) {
        logger.warn(
          'no cache backend configured: using the in-process store (single instance; counters are not shared)',
        );
      } else {
        logger.warn({ backend: backend.description }, 'cache backend');
      }
      if (runtime.usingBundledExample) {
        logger.warn(
          { dir: configDirectory(runtime) },
          'RUNTIME_ROOT is not set: using the bundled example config',
        );
      }
      if (runtime.configType === 'GRPC_XDS_SOTW') {
        // Loaded only in this mode: the xDS messages are a few MB of parsed .proto files.
        const [{ XdsConfigClient }, { snapshotToConfigFiles }] = await Promise.all([
          import('./runtime/xds/client.js'),
          import('./runtime/xds/config-files.js'),
        ]);
        // Rules from the management server: a snapshot that fails to load is NACKed with the error.
        xds = new XdsConfigClient({
          settings: settings.observability.xds,
          apply: (configs) => {
            const error = configManager.loadFiles(snapshotToConfigFiles(configs));
            if (error !== undefined) throw new Error(error);
          },
          log: logger,
        });
        xds.start();
      } else {
        await configManager.reload();
        configManager.ensureWatching();
      }
      if (!runtime.forceStartWithoutInitialConfig) await waitForValidConfig();
      if (settings.backend.type === 'redis' && !options.backend) {
        await waitForRedis(backend, settings.backend.startup, logger);
      } else if (!(await backend.ready())) {
        logger.warn({ backend: backend.description }, 'cache backend not reachable yet');
      }
    },
    markTerminating() {
      health.set('sigterm', false);
    },
    async close(graceMs = 10_000) {
      health.set('sigterm', false);
      configManager.close();
      await xds?.stop();
      // RLQS streams never end by themselves: ended first (status OK), so the gRPC server can drain.
      await quota?.close();
      await Promise.all([shutdownGrpc(grpcServer, graceMs), closeHttp(httpServer, graceMs)]);
      await backend.close();
      await tracing.shutdown();
    },
  };
}
