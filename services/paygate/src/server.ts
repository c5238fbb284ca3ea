// First: tracing patches http and pg as they load (off unless OTEL_* asks for it).
import './telemetry.js';
import { closeOnSignals, startStep } from '@platform/http-edge/lifecycle';
import { withListeningPort } from '@platform/http-edge/listening-url';
import { createLogger } from '@platform/logging/logger';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { createMetricsRegistry } from '@platform/observability/registry';
import { buildApp } from './app.js';
import { CatalogError, loadCatalog } from './catalog/load.js';
import { ConfigError, loadConfig } from './config.js';
import { openStorage } from './db/open.js';
import { tracing } from './telemetry.js';

// A wrong setting or gateway file stops the start with one clear line instead of a stack trace.
process.on('uncaughtException', (error) => {
  const clear = error instanceof ConfigError || error instanceof CatalogError;
  console.error(clear ? `paygate: ${error.message}` : error);
  process.exit(1);
});

const config = loadConfig();
// Without PUBLIC_URL the address follows the port the server listens on (known after listen).
let publicUrl = config.publicUrl;
// Merchant URLs given as paths (the try-it merchant's) are on this gateway's public address.
const catalog = loadCatalog(config.catalogFile, config.merchantEnv, config.secretExposure, () => publicUrl);
const db = await openStorage(config.storage);
const metrics = createMetricsRegistry();
const { app } = await buildApp({
  ...(config.metrics.port === 'off' ? {} : { metrics }),
  db,
  catalog,
  publicUrl: () => publicUrl,
  bodyLimit: config.bodyLimit,
  signatureWindowSeconds: config.signatureWindowSeconds,
  invoiceTtlSeconds: config.invoiceTtlSeconds,
  payoutSettleMs: config.payoutSettleMs,
  cardAttemptsMax: config.cardAttemptsMax,
  unsignedInvoices: {
    perAddress: config.unsignedInvoicesPerAddress,
    windowSeconds: config.unsignedInvoicesWindowSeconds,
  },
  trustedProxies: config.trustedProxies,
  workerIntervalMs: config.workerIntervalMs,
  callbackRetryBaseMs: config.callbackRetryBaseMs,
  callbackRetryMaxMs: config.callbackRetryMaxMs,
  callbackTimeoutMs: config.callbackTimeoutMs,
  callbackMaxAttempts: config.callbackMaxAttempts,
  callbackConcurrency: config.callbackConcurrency,
  ...(config.testSeed === undefined ? {} : { faultSeed: config.testSeed }),
  logger: createLogger({ service: 'paygate', ...config.log }),
});
for (const merchant of catalog.merchants.values()) {
  app.log.info(
    { merchant: merchant.id, testMode: merchant.testMode, callbackUrl: merchant.callbackUrl },
    'merchant ready',
  );
}

closeOnSignals(app.log, {
  close: async () => {
    await metricsListener.close();
    await app.close();
    await db.close();
    await tracing.shutdown();
  },
});

const metricsListener = await startStep('paygate', startMetricsListener(metrics, config.metrics, app.log));
await startStep('paygate', app.listen({ port: config.port, host: config.host }));
if (config.publicUrlFromListener) publicUrl = withListeningPort(publicUrl, app.server);
