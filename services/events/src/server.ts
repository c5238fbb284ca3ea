// First: tracing patches http and pg as they load (off unless OTEL_* asks for it).
import './telemetry.js';

/**
 * Process entry: reads the settings, opens the database (migrating it) and the token verifier,
 * listens, and on SIGTERM/SIGINT stops accepting, lets in-flight requests finish, then closes.
 */
import { createLogger, type Logger } from '@platform/logging/logger';
import { MetricsListenError, startMetricsListener } from '@platform/observability/metrics-listener';
import { createMetricsRegistry } from '@platform/observability/registry';
import { LockHeldError } from '@platform/sql-storage/process-lock';
import { buildApp } from './app.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { createTokenVerifier, type VerifierKey } from './auth/token-verifier.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { registerCacheMetrics, registerChangeFeedLag } from './metrics/cache-metrics.js';
import { registerWebhookMetrics } from './metrics/webhook-metrics.js';
import type { CacheCounters } from './storage/cached-event-store.js';
import { openStorage } from './storage/open-store.js';
import { tracing } from './telemetry.js';
import type { WebhookCounters } from './webhooks/dispatcher.js';

async function resolveKey(config: Config, logger: Logger): Promise<VerifierKey> {
  const auth = config.jwt.auth;
  if (auth.kind !== 'dev-secret-file') return auth;
  const { secret, created } = await loadOrCreateDevSecret(auth.file);
  logger.warn(
    { file: auth.file, created },
    'JWT_SECRET and JWT_JWKS_URL are unset: verifying HS256 tokens with the development secret in this ' +
      'file. Mint a token with: npm run token -w services/events -- <user-id> [--member]',
  );
  return { kind: 'hmac', secret };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`events: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ service: 'events', ...config.log });
  const key = await resolveKey(config, logger);
  const metrics = createMetricsRegistry();
  const cacheCounters: CacheCounters = { hits: 0, misses: 0, invalidations: 0, live: false };
  registerCacheMetrics(metrics, cacheCounters);
  const onChangeFeedLag = registerChangeFeedLag(metrics);
  const webhookCounters: WebhookCounters = { delivered: 0, failedAttempts: 0, disabled: 0 };
  registerWebhookMetrics(metrics, webhookCounters);
  const { store, sql } = await openStorage(config.storage, {
    cacheMaxEntries: config.readCacheMaxEntries,
    cacheCounters,
    onChangeFeedLag,
    onBackgroundError: (error) => logger.warn({ err: error }, 'background database connection failed'),
  });
  const app = await buildApp({
    store,
    verifier: createTokenVerifier({ ...config.jwt, key }),
    basePath: config.basePath,
    bodyLimitBytes: config.bodyLimitBytes,
    corsOrigin: config.corsOrigin,
    logger,
    storageLabel: config.storage.kind,
    features: {
      sql,
      settings: config.features,
      ...(config.storage.kind === 'postgres' ? { lockUrl: config.storage.url } : {}),
      webhookCounters,
      senderThread: { log: config.log },
    },
    ...(config.metrics.port === 'off' ? {} : { metrics }),
  });
  const metricsListener = await startMetricsListener(metrics, config.metrics, logger);

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    Promise.all([app.close(), metricsListener.close()])
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  logger.info(
    { storage: config.storage.kind, basePath: config.basePath || '/', docs: '/docs' },
    'events API listening',
  );
}

main().catch((error: unknown) => {
  // Another process holds the embedded database: one line naming it, no stack trace.
  if (error instanceof LockHeldError) {
    process.stderr.write(`events: ${error.message}\n`);
    process.exit(2);
  }
  // A port in use names its setting (METRICS_PORT, PORT): one line too.
  if (error instanceof MetricsListenError || (error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    process.stderr.write(`events: could not start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  process.stderr.write(`events: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
