import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { databaseHealthRoute } from '@platform/http-edge/health';
import { registerRawJsonBody } from '@platform/http-edge/json-body';
import { landingRoute } from '@platform/http-edge/landing-page';
import { drainRefusedBodies } from '@platform/http-edge/refused-body';
import { edgeServerOptions } from '@platform/http-edge/server-options';
import { refuseUnstorableInput } from '@platform/http-edge/storable-input';
import { registerStrictBodyValidation } from '@platform/http-edge/strict-body-validation';
import type { Logger } from '@platform/logging/logger';
import { requestLogOptions } from '@platform/logging/request-log';
import { registerHealthRoutes } from '@platform/observability/health';
import { registerRouteMetrics } from '@platform/observability/route-metrics';
import type { Database } from '@platform/sql-storage/database';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { Registry } from 'prom-client';
import type { Catalog } from './catalog/catalog.js';
import { ApiError } from './errors.js';
import { eventRoutes } from './events/routes.js';
import type { RouteDeps } from './http/deps.js';
import { frameworkErrors, registerErrorHandler } from './http/error-handler.js';
import { ErrorResponse } from './http/schemas.js';
import type { App } from './http/typed.js';
import { registerIdempotency } from './idempotency/hooks.js';
import { paymentLinkRoutes } from './links/routes.js';
import { registerGatewayMetrics } from './metrics/gateway-metrics.js';
import { Worker } from './payments/worker.js';
import { type CardProcessor, sandboxCardProcessor } from './processor/card.js';
import { type PayoutProcessor, sandboxPayoutProcessor } from './processor/payout.js';
import { refundRoutes } from './refunds/routes.js';
import { assetRoutes } from './routes/assets.js';
import { hostedPageRoutes } from './routes/hosted-page.js';
import { invoiceRoutes } from './routes/invoices.js';
import { merchantRoutes } from './routes/merchant.js';
import { prerequestRoutes } from './routes/prerequests.js';
import { registerSandboxFaultMetric } from './sandbox/fault-metrics.js';
import { CallbackSandbox, type MerchantFaults } from './sandbox/sandbox.js';
import { SecretBook } from './secrets/book.js';
import { tryItRoutes } from './try-it/routes.js';
import { UnsignedInvoiceLimit } from './unsigned-limit/limit.js';
import type { UnsignedLimitSettings } from './unsigned-limit/window.js';

export interface AppOptions {
  readonly db: Database;
  readonly catalog: Catalog;
  /**
   * The gateway's public address; form actions and logo links use it. A function is read at each
   * use (the server's own address is known only once it listens).
   */
  readonly publicUrl: string | (() => string);
  /**
   * The service logger (`@platform/logging`): one line per request, by method and path only (page
   * tokens in query strings redacted; bodies, with card numbers and codes, never logged). @default no logs
   */
  readonly logger?: Logger;
  /** Clock in ms. @default Date.now */
  readonly now?: () => number;
  /** @default 65536 */
  readonly bodyLimit?: number;
  /** @default 300 */
  readonly signatureWindowSeconds?: number;
  /** @default 1800 */
  readonly invoiceTtlSeconds?: number;
  /** @default 2000 */
  readonly payoutSettleMs?: number;
  /** Cards a payer may try on one invoice. @default 3 */
  readonly cardAttemptsMax?: number;
  /**
   * Invoices one client address may create without the merchant's signature per window (README
   * "Unsigned invoices"). @default 20 per 60 s
   */
  readonly unsignedInvoices?: UnsignedLimitSettings;
  /** Proxies whose `X-Forwarded-For` names the client (Fastify `trustProxy`). @default none: the socket's address */
  readonly trustedProxies?: readonly string[];
  /** @default the sandbox processors */
  readonly cards?: CardProcessor;
  readonly payoutProcessor?: PayoutProcessor;
  /** Background loop (expiry, payouts, callbacks); false leaves it stopped (tests drive `worker.runOnce()`). @default true */
  readonly startWorker?: boolean;
  /** @default 500 */
  readonly workerIntervalMs?: number;
  /** @default 1000 */
  readonly callbackRetryBaseMs?: number;
  /** @default 300000 */
  readonly callbackRetryMaxMs?: number;
  /** @default 10000 */
  readonly callbackTimeoutMs?: number;
  /** Attempts before a callback is dead-lettered. @default 25 */
  readonly callbackMaxAttempts?: number;
  /** Callbacks in flight at once. @default 64 */
  readonly callbackConcurrency?: number;
  /**
   * The registry the per-route and gateway metrics go to (server.ts passes the process registry,
   * served by the metrics listener). Without it nothing is recorded per request. @default none
   */
  readonly metrics?: Registry;
  /**
   * The seed of the callback faults of a test merchant whose `callback_faults` names none (`TEST_SEED`).
   * @default a random one, logged
   */
  readonly faultSeed?: number;
}

/** The test merchants with callback faults, each with the seed of this run (logged, so a run can be repeated). */
function sandboxOf(
  catalog: Catalog,
  fallbackSeed: number | undefined,
  log: FastifyBaseLogger,
): CallbackSandbox {
  const merchants = new Map<string, MerchantFaults>();
  for (const merchant of catalog.merchants.values()) {
    if (!merchant.callbackFaults) continue;
    const seed = merchant.callbackFaults.seed ?? fallbackSeed ?? Math.floor(Math.random() * 2 ** 31);
    merchants.set(merchant.id, { faults: merchant.callbackFaults, seed });
    log.warn(
      { merchant: merchant.id, seed, faults: merchant.callbackFaults },
      `sandbox: callbacks of merchant ${merchant.id} are duplicated, delayed, reordered, dropped and signed with a rotated secret on purpose (repeat with seed=${seed})`,
    );
  }
  return new CallbackSandbox(merchants);
}

export interface Gateway {
  readonly app: App;
  readonly worker: Worker;
}

/** Builds the HTTP app and its background worker over opened storage; closing the app stops the worker. */
export async function buildApp(options: AppOptions): Promise<Gateway> {
  const app = Fastify({
    ...edgeServerOptions({
      logger: options.logger,
      bodyLimit: options.bodyLimit,
      frameworkErrors,
      trustedProxies: options.trustedProxies,
    }),
    // one line per request, secrets removed from its path (@platform/logging)
    ...requestLogOptions(),
  }).withTypeProvider<TypeBoxTypeProvider>();
  const now = options.now ?? Date.now;
  // Per-request metrics only with a registry to serve (METRICS_PORT=off: none, nothing recorded).
  const metrics = options.metrics ?? new Registry();
  if (options.metrics) registerRouteMetrics(app, metrics);
  registerGatewayMetrics(metrics, options.db, now, (error) =>
    app.log.warn({ err: error }, 'a gateway metric could not be read'),
  );
  const deps: RouteDeps = {
    db: options.db,
    catalog: options.catalog,
    cards: options.cards ?? sandboxCardProcessor(),
    payoutProcessor: options.payoutProcessor ?? sandboxPayoutProcessor(),
    now,
    invoiceTtlMs: (options.invoiceTtlSeconds ?? 1_800) * 1_000,
    payoutSettleMs: options.payoutSettleMs ?? 2_000,
    cardAttemptsMax: options.cardAttemptsMax ?? 3,
    get publicUrl() {
      const { publicUrl } = options;
      return (typeof publicUrl === 'string' ? publicUrl : publicUrl()).replace(/\/+$/, '');
    },
    signatureWindowSeconds: options.signatureWindowSeconds ?? 300,
    secrets: new SecretBook(options.db, now),
    unsignedInvoices: new UnsignedInvoiceLimit(
      options.db,
      options.unsignedInvoices ?? { perAddress: 20, windowSeconds: 60 },
      now,
    ),
  };
  const worker = new Worker(
    deps,
    {
      db: options.db,
      catalog: options.catalog,
      now,
      log: app.log,
      retryBaseMs: options.callbackRetryBaseMs ?? 1_000,
      retryMaxMs: options.callbackRetryMaxMs ?? 300_000,
      timeoutMs: options.callbackTimeoutMs ?? 10_000,
      maxAttempts: options.callbackMaxAttempts ?? 25,
      concurrency: options.callbackConcurrency ?? 64,
      ...(deps.secrets ? { secrets: deps.secrets } : {}),
      sandbox: sandboxOf(options.catalog, options.faultSeed, app.log),
      countFault: registerSandboxFaultMetric(metrics),
    },
    options.workerIntervalMs ?? 500,
    app.log,
  );
  app.addHook('onClose', async () => {
    await worker.stop();
  });
  registerErrorHandler(app);
  registerRawJsonBody(app, { malformed: (message) => new ApiError('malformed_json', message) });
  refuseUnstorableInput(app);
  registerIdempotency(app, { db: options.db, now });
  // Bodies are validated without type coercion: "0x1" or true is no number (http-edge).
  registerStrictBodyValidation(app);
  drainRefusedBodies(app);
  await app.register(formbody);
  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Payment gateway API',
        version: '1.0.0',
        description:
          'Public API (prerequests, invoices), the hosted payment page, and the merchant API (payouts, ' +
          'status), signed with the merchant secret. Every JSON error is `{"error": {"code", "name", "message", "field"?}}`.',
      },
      components: {
        securitySchemes: {
          paygateMerchant: { type: 'apiKey', in: 'header', name: 'x-paygate-merchant' },
          paygateTimestamp: { type: 'apiKey', in: 'header', name: 'x-paygate-timestamp' },
          paygateSignature: { type: 'apiKey', in: 'header', name: 'x-paygate-signature' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  landingRoute(app, {
    title: 'paygate',
    summary:
      'The fiat payment gateway: prerequests and invoices, a hosted payment page, signed payouts and callbacks.',
    links: [
      { label: 'API documentation (OpenAPI)', href: '/docs' },
      { label: 'Health', href: '/health' },
    ],
  });
  databaseHealthRoute(app, deps.db);
  registerHealthRoutes(app, { database: () => deps.db.query('SELECT 1') });
  prerequestRoutes(app, deps);
  invoiceRoutes(app, deps);
  hostedPageRoutes(app, deps);
  merchantRoutes(app, deps);
  refundRoutes(app, deps);
  eventRoutes(app, deps);
  paymentLinkRoutes(app, deps);
  assetRoutes(app, deps);
  tryItRoutes(app);
  if (options.startWorker ?? true) app.addHook('onReady', async () => worker.start());
  return { app, worker };
}
