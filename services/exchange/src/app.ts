import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import formbody from '@fastify/formbody';
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
import { registerRefusalMetrics } from '@platform/observability/refusal-metrics';
import { registerRouteMetrics } from '@platform/observability/route-metrics';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { accountRoutes } from './accounts/account.js';
import { v2MemberRoutes } from './accounts/v2-members.js';
import { ApiKeyCache } from './auth/key-cache.js';
import { type CancelAfterConfig, DEFAULT_CANCEL_AFTER } from './cancel-all/config.js';
import { registerCancelAll } from './cancel-all/register.js';
import { candleRoutes } from './candles/routes.js';
import type { ClusterConfig } from './cluster/config.js';
import { registerCluster } from './cluster/register.js';
import type { FailureLimits } from './codes/limits.js';
import { registerTransferCodes } from './codes/register.js';
import { defaultFeedConfig, defaultPaygateConfig, type FeedConfig, type PaygateConfig } from './config.js';
import type { SecretBox } from './crypto/secret-box.js';
import type { Database } from './db/database.js';
import { registerApiDocs } from './docs/register.js';
import { ApiError } from './errors.js';
import { registerFeed } from './feed/register.js';
import { createFiat, type FiatOptions, registerFiat } from './fiat/register.js';
import type { RouteDeps } from './http/deps.js';
import { frameworkErrors, registerErrorHandler } from './http/error-handler.js';
import { ErrorResponse } from './http/schemas.js';
import type { App } from './http/typed.js';
import { type RequestLimitsOptions, registerRequestLimits } from './limits/register.js';
import { linkRoutes } from './mail/link-routes.js';
import { ActionLinks } from './mail/links.js';
import type { Mailer } from './mail/mailer.js';
import { createOutboxMailer } from './mail/outbox.js';
import { currencyRoutes } from './market-data/currencies.js';
import { exchangeRateRoutes } from './market-data/exchange-rates.js';
import { feeRoutes } from './market-data/fees.js';
import { marketDataRoutes } from './market-data/market-data.js';
import { marketRoutes } from './market-data/markets.js';
import { timestampRoutes } from './market-data/timestamp.js';
import { MarketStats } from './market-stats/market-stats.js';
import { registerExchangeMetrics } from './metrics/exchange-metrics.js';
import { clientOrderRoutes } from './orders/client-order-ids.js';
import { CommitFeed } from './orders/commits.js';
import type { FeeRates } from './orders/markets.js';
import { OrderService } from './orders/service.js';
import { v2OrderRoutes } from './orders/v2-orders.js';
import { v3OrderRoutes } from './orders/v3-orders.js';
import type { ReferenceData } from './reference/load.js';
import type { SnapshotSettings } from './snapshots/book-snapshots.js';
import { logSnapshotEvent } from './snapshots/log.js';
import { walletMethodRoutes } from './wallet/setup.js';
import type { Wallet } from './wallet/wallet.js';
import { walletRoutes } from './wallet/wallets.js';
import { DEFAULT_WITHDRAW_ADDRESS_LOCK_S, type WithdrawAddressConfig } from './withdraw-addresses/config.js';
import { registerWithdrawAddresses } from './withdraw-addresses/register.js';

export interface AppOptions {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  /** @default 300000 */
  readonly nonceWindowMs?: number;
  /** @default 65536 */
  readonly bodyLimit?: number;
  /** The service logger (`@platform/logging`); one line per request is written to it. @default no logs */
  readonly logger?: Logger;
  /** Clock in ms. @default Date.now */
  readonly now?: () => number;
  /** Maker/taker fee rates of every market. @default maker 0.1 %, taker 0.2 % */
  readonly fees?: FeeRates;
  /** Order batch statements in flight at once (see OrderServiceOptions). @default 1 */
  readonly orderPipelineDepth?: number;
  /** Durable book snapshots (see OrderServiceOptions.snapshots). @default none: whole-log replay at start-up, not logged */
  readonly bookSnapshots?: SnapshotSettings;
  /** Limits of failed transfer-code redemptions (src/codes/limits.ts). @default 10 per account, 30 per address, 15 min */
  readonly codeFailureLimits?: FailureLimits;
  /** Crypto deposits and withdrawals (src/wallet/setup.ts createWallet); closed with the app. */
  readonly wallet?: Wallet;
  /** The withdrawal address book (src/withdraw-addresses/). @default a lock of 86400 s */
  readonly withdrawAddresses?: WithdrawAddressConfig;
  /**
   * Outgoing mail and the links in it; the app closes the mailer when it closes.
   * @default an outbox folder under the system's temporary directory, links to http://127.0.0.1:3100, valid 1 h
   */
  readonly mail?: {
    readonly mailer: Mailer;
    readonly publicUrl: string | (() => string);
    readonly linkTtlMs: number;
  };
  /** The payment gateway (fiat). @default the defaults of config.ts (`defaultPaygateConfig`) */
  readonly paygate?: PaygateConfig;
  /** Fiat: payout dispatcher timing and the withdrawal confirmation mail (src/fiat/register.ts). */
  readonly fiat?: FiatOptions;
  /** Followers of committed batches (orders/commits.ts), for a caller that follows them too. @default a new feed */
  readonly commits?: CommitFeed;
  /** The live WebSocket feed (src/feed/). @default the defaults of config.ts (`defaultFeedConfig`) */
  readonly feed?: FeedConfig;
  /** Request limits (src/limits/); the app closes the limiter. @default none: no limits */
  readonly limits?: RequestLimitsOptions;
  /** Proxies whose `X-Forwarded-For` names the client (Fastify `trustProxy`). @default none: the socket address */
  readonly trustedProxies?: readonly string[];
  /** This app is a node of a cluster (src/cluster/, README "Running a cluster"). @default none: one process */
  readonly cluster?: ClusterConfig;
  /**
   * The registry the per-route and exchange metrics go to (server.ts passes the process registry,
   * served by the metrics listener). Without it nothing is recorded per request. @default none
   */
  readonly metrics?: Registry;
  /** The dead-man's switch scheduler (src/cancel-all/). @default checks every 200 ms, claims for 5 s */
  readonly cancelAfter?: CancelAfterConfig;
}

/**
 * Builds the HTTP app over already-opened storage: rebuilds every order book from the stored command
 * log before it returns; closing the app waits for queued orders to be committed.
 */
export async function buildApp(options: AppOptions): Promise<App> {
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
  // Before any route: the hooks cover every route added after them.
  // Per-request metrics only with a registry to serve (METRICS_PORT=off: none, nothing recorded).
  const metrics = options.metrics ?? new Registry();
  if (options.metrics) {
    registerRouteMetrics(app, metrics);
    registerRefusalMetrics(app, metrics, {
      name: 'exchange_requests_refused_total',
      help: 'Requests refused, by route pattern and error name (rate_limited: the request limits).',
      reasonOf: refusalReason,
    });
  }
  const orders = await OrderService.start({
    db: options.db,
    commits:
      options.commits ??
      new CommitFeed((error) => app.log.error({ err: error }, 'a follower of committed batches failed')),
    reference: options.reference,
    now,
    ...(options.fees ? { fees: options.fees } : {}),
    ...(options.orderPipelineDepth ? { pipelineDepth: options.orderPipelineDepth } : {}),
    ...(options.cluster ? { clusterNode: options.cluster.nodeId } : {}),
    ...(options.bookSnapshots
      ? { snapshots: { ...options.bookSnapshots, report: (event) => logSnapshotEvent(app.log, event) } }
      : {}),
  });
  app.addHook('onClose', async () => {
    await orders.close();
  });
  if (options.cluster) {
    await registerCluster(app, {
      db: options.db,
      orders,
      config: options.cluster,
      secretBox: options.secretBox,
    });
  }
  const marketStats = await MarketStats.start({
    db: options.db,
    orders,
    clock: now,
    onError: (error) => app.log.error({ err: error }, 'reading the trade window again failed'),
  });
  app.addHook('onClose', async () => {
    marketStats.close();
  });
  const mail = options.mail ?? {
    mailer: createOutboxMailer(
      mkdtempSync(path.join(tmpdir(), 'exchange-outbox-')),
      'Exchange <no-reply@exchange.invalid>',
    ),
    publicUrl: 'http://127.0.0.1:3100',
    linkTtlMs: 3_600_000,
  };
  app.addHook('onClose', async () => {
    await mail.mailer.close();
  });
  const links = new ActionLinks({
    db: options.db,
    key: options.secretBox.deriveKey('action-links'),
    publicUrl: mail.publicUrl,
    ttlMs: mail.linkTtlMs,
    now,
  });
  const base: RouteDeps = {
    mailer: mail.mailer,
    links,
    orders,
    marketStats,
    db: options.db,
    reference: options.reference,
    now,
    paygate: options.paygate ?? defaultPaygateConfig(),
    auth: {
      db: options.db,
      secretBox: options.secretBox,
      now,
      nonceWindowMs: options.nonceWindowMs ?? 300_000,
      keys: new ApiKeyCache(),
    },
    ...(options.wallet ? { wallet: options.wallet } : {}),
  };
  // Fiat (src/fiat/): the gateway client, the payout dispatcher and the port behind /v3/auth/withdraw.
  const fiat = createFiat(base, { log: app.log, ...options.fiat });
  const deps: RouteDeps = { ...base, fiatWithdrawals: fiat.withdrawals };
  registerErrorHandler(app);
  // Before any route: the limits classify routes as they are added.
  if (options.limits) registerRequestLimits(app, options.limits);
  registerRawJsonBody(app, { malformed: (message) => new ApiError('malformed_json', message) });
  refuseUnstorableInput(app);
  // Bodies are validated without type coercion: "0x1" or true is no number (http-edge).
  registerStrictBodyValidation(app);
  drainRefusedBodies(app);
  await app.register(formbody);
  app.addSchema(ErrorResponse);
  // The OpenAPI document and its page, whose Try it out signs v3 requests (src/docs/).
  await registerApiDocs(app);
  landingRoute(app, {
    title: 'exchange',
    summary:
      'A crypto exchange: v3 trading and wallet API, v2 (Peatio-style) order entry, matching engine, ledger.',
    links: [
      { label: 'API documentation (OpenAPI, Try it out)', href: '/docs' },
      { label: 'Health', href: '/health' },
      { label: 'Markets', href: '/v3/markets', note: 'public data' },
    ],
  });
  databaseHealthRoute(app, deps.db);
  registerHealthRoutes(app, { database: () => deps.db.query('SELECT 1') });
  timestampRoutes(app, deps);
  currencyRoutes(app, deps);
  marketRoutes(app, deps);
  feeRoutes(app, deps);
  exchangeRateRoutes(app, deps);
  accountRoutes(app, deps);
  walletRoutes(app, deps);
  v2MemberRoutes(app, deps);
  v2OrderRoutes(app, deps);
  v3OrderRoutes(app, deps);
  marketDataRoutes(app, deps);
  candleRoutes(app, deps);
  clientOrderRoutes(app, deps);
  registerCancelAll(app, deps, {
    config: options.cancelAfter ?? DEFAULT_CANCEL_AFTER,
    metrics,
    ...(options.cluster ? { node: options.cluster.nodeId } : {}),
  });
  registerTransferCodes(app, deps, options.codeFailureLimits ? { limits: options.codeFailureLimits } : {});
  walletMethodRoutes(app, deps);
  registerWithdrawAddresses(
    app,
    deps,
    options.withdrawAddresses ?? { lockMs: DEFAULT_WITHDRAW_ADDRESS_LOCK_S * 1000 },
  );
  linkRoutes(app, links);
  registerFiat(app, fiat);
  const feed = options.feed ?? defaultFeedConfig();
  const feedHub = feed.enabled ? await registerFeed(app, deps, feed, options.limits) : undefined;
  registerExchangeMetrics(metrics, {
    db: options.db,
    orders,
    feedConnections: () =>
      (app as { websocketServer?: { clients: Set<unknown> } }).websocketServer?.clients.size,
    feedFramesDropped: () => feedHub?.dropped,
    onError: (error) => app.log.warn({ err: error }, 'an exchange metric could not be read'),
  });
  return app;
}

/** The error name of a refused request: ours, Fastify's validation, or another client error. */
function refusalReason(error: unknown): string | undefined {
  if (error instanceof ApiError) return error.errorName;
  if ((error as { validation?: unknown }).validation !== undefined) return 'validation_failed';
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status < 500 ? 'bad_request' : undefined;
}
