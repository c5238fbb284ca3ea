/**
 * Builds the HTTP app from resolved settings and adapters. No side effects at import; `server.ts`
 * (or a test) opens the store and the token verifier and passes them in. Wiring happens here only.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { landingRoute } from '@platform/http-edge/landing-page';
import { drainRefusedBodies } from '@platform/http-edge/refused-body';
import { refuseUnstorableInput } from '@platform/http-edge/storable-input';
import { requestLogOptions } from '@platform/logging/request-log';
import type { LogSettings } from '@platform/logging/settings';
import { registerHealthRoutes } from '@platform/observability/health';
import { registerRouteMetrics } from '@platform/observability/route-metrics';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { TokenVerifier } from './auth/token-verifier.js';
import { calendarRoutes } from './calendar/routes.js';
import { sharedKey } from './changes/change-log.js';
import { startPruner } from './changes/pruner.js';
import type { FeatureSettings } from './config.js';
import { corsHeaders, installCors } from './http/cors.js';
import { frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { createValidatorCompiler } from './http/validator.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import type { EventStore } from './storage/event-store.js';
import { createPgClient } from './storage/pg-client.js';
import type { SqlClient } from './storage/sql-client.js';
import { syncRoutes } from './sync/routes.js';
import { createDispatcher, type Dispatcher, type WebhookCounters } from './webhooks/dispatcher.js';
import { createHttpSender } from './webhooks/http-sender.js';
import { createLocalLocks, createPgLocks, LOCK_APPLICATION_NAME } from './webhooks/locks.js';
import { webhookRoutes } from './webhooks/routes.js';
import { startSenderThread } from './webhooks/sender-thread.js';
import { createSubscriptionStore } from './webhooks/subscription-store.js';
import { wakeOnWrite } from './webhooks/wake-on-write.js';

export interface AppOptions {
  store: EventStore;
  verifier: TokenVerifier;
  /** `BASE_PATH`, e.g. `/api`; `''` for none. `/health` and `/docs` stay at the root. */
  basePath: string;
  bodyLimitBytes: number;
  /** `CORS_ORIGIN`: `*` or the origins browsers may call from. @default '*' */
  corsOrigin?: '*' | readonly string[];
  /** A pino logger; omitted means no logs (tests). */
  logger?: FastifyBaseLogger;
  /** Label shown by `/health` (e.g. `postgres`, `pglite`). */
  storageLabel: string;
  /** The clock stamped into createdAt/updatedAt. @default the system clock */
  now?: () => Date;
  /** Close the store when the app closes. @default true */
  closeStore?: boolean;
  /**
   * The registry the per-route metrics go to (server.ts passes the process registry, served by the
   * metrics listener). Without it nothing is recorded per request. @default none
   */
  metrics?: Registry;
  /**
   * Incremental sync, calendar feeds and webhooks (issue 45), over the store's own database. The
   * server always passes it; without it only the event routes are served (their own tests).
   */
  features?: FeaturesOptions;
}

export interface FeaturesOptions {
  /** The database the store writes to (its change log is what these read). */
  sql: SqlClient;
  settings: FeatureSettings;
  /**
   * PostgreSQL URL of the webhook senders' lock connection (one sender per subscription across
   * instances) and of their own pool (commits without a WAL flush); omitted with PGlite, where this
   * process alone opens the database.
   */
  lockUrl?: string;
  /** Counted into when given (the metrics). */
  webhookCounters?: WebhookCounters;
  /**
   * Send from a worker thread (`src/webhooks/sender-thread.ts`) when `settings.webhooks.senderThread`
   * and `lockUrl` allow it, its logger of these settings. The server sets it; tests that inject a
   * clock or jitter leave it out and get the sender in this thread.
   */
  senderThread?: { log?: LogSettings };
  /** Jitter of the retry schedule. @default Math.random */
  random?: () => number;
}

/** Incoming `X-Request-Id` values are kept only when short and plain, so logs cannot be forged. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const corsOrigin = options.corsOrigin ?? '*';
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    // one line per request, secrets removed from its path (@platform/logging)
    ...requestLogOptions(),
    bodyLimit: options.bodyLimitBytes,
    // eventIds longer than 64 characters get a clear 400 from the schema, not a route miss, up to this length.
    routerOptions: { maxParamLength: 500 },
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Let in-flight requests finish on close; idle keep-alive sockets are closed at once.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Router errors (414 for a too long id, a malformed URL) in our error shape with the request id.
    frameworkErrors: frameworkErrorHandler((request) => corsHeaders(corsOrigin, request.headers.origin)),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before any route: the hook covers every route added after it.
  // Only with a registry to serve (METRICS_PORT=off: none, nothing recorded per request).
  if (options.metrics) registerRouteMetrics(app, options.metrics);
  app.setValidatorCompiler(createValidatorCompiler());
  // A NUL or an unpaired surrogate in a body string: PostgreSQL cannot store the first (a 500
  // before) and the driver replaced the second (http-edge).
  refuseUnstorableInput(app);
  // JSON only: a text/plain body is a 415, not a string that fails validation later.
  app.removeContentTypeParser(['text/plain']);
  // Hooks on every request take `done` rather than being async: no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  installErrorHandling(app);
  drainRefusedBodies(app);
  installCors(app, corsOrigin);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Events API',
        version: '1.0.0',
        description:
          'Event management (spec part A); incremental sync, iCalendar feeds and Standard Webhooks (issue 45). ' +
          'Errors: {statusCode, message, error}.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  landingRoute(app, {
    title: 'events',
    summary:
      'An event-management REST API: create-or-replace, list, read and delete events; JWT authentication.',
    links: [
      { label: 'API documentation (OpenAPI)', href: '/docs' },
      { label: 'Health', href: '/health' },
      { label: 'Events', href: `${options.basePath}/events`, note: 'public events' },
      ...(options.features === undefined
        ? []
        : [
            { label: 'Calendar', href: `${options.basePath}/events.ics`, note: 'public events as iCalendar' },
            { label: 'Sync', href: `${options.basePath}/events/sync`, note: 'incremental sync' },
          ]),
    ],
  });

  // The caller of every route, set by the token hooks (src/http/authenticate.ts).
  app.decorateRequest('viewer', null);
  await app.register(healthRoutes, { store: options.store, storage: options.storageLabel });
  registerHealthRoutes(app, { database: () => options.store.ping() });
  const now = options.now ?? (() => new Date());
  const features = options.features;
  const dispatcher = features === undefined ? undefined : startDispatcher(features, now, options.logger);
  await app.register(eventRoutes, {
    prefix: options.basePath,
    store: dispatcher === undefined ? options.store : wakeOnWrite(options.store, dispatcher.wake),
    verifier: options.verifier,
    now,
    basePath: options.basePath,
  });
  if (features !== undefined) await registerFeatures(app, options, features, now, dispatcher);

  // Senders first (they commit their progress), then the store.
  if (dispatcher !== undefined) app.addHook('onClose', async () => dispatcher.close());
  if (options.closeStore !== false) app.addHook('onClose', async () => options.store.close());
  return app;
}

function startDispatcher(
  features: FeaturesOptions,
  now: () => Date,
  logger: FastifyBaseLogger | undefined,
): Dispatcher | undefined {
  const webhooks = features.settings.webhooks;
  if (!webhooks.dispatch) return undefined;
  if (features.senderThread !== undefined && webhooks.senderThread && features.lockUrl !== undefined) {
    return startSenderThread({
      url: features.lockUrl,
      settings: webhooks,
      nice: webhooks.senderNice,
      ...(features.senderThread.log ? { log: features.senderThread.log } : {}),
      ...(logger ? { logger } : {}),
      ...(features.webhookCounters ? { counters: features.webhookCounters } : {}),
    });
  }
  // On PostgreSQL the sender has a pool of its own whose commits do not wait for a WAL flush. Writes
  // are serialised through the change log's head row up to their commit's flush, so every flush of
  // the sender's (a cursor moved, a delivery recorded) stood in that queue: measured with 10
  // subscriptions, writers waited on WALSync behind the sender's commits. A sender's commit lost at
  // a crash only moves its cursor back: those messages are sent again (at least once), none lost.
  const senderSql =
    features.lockUrl === undefined
      ? features.sql
      : createPgClient({
          url: features.lockUrl,
          poolMax: webhooks.concurrency + 1,
          synchronousCommit: false,
          applicationName: `${LOCK_APPLICATION_NAME}-pool:${process.pid}`,
          onIdleError: (error) => logger?.warn({ err: error }, 'webhook sender connection failed'),
        });
  const dispatcher = createDispatcher({
    sql: senderSql,
    store: createSubscriptionStore(senderSql),
    locks:
      features.lockUrl === undefined
        ? createLocalLocks()
        : createPgLocks(features.lockUrl, (error) =>
            logger?.warn({ err: error }, 'webhook lock connection failed'),
          ),
    sender: createHttpSender({
      timeoutMs: webhooks.timeoutMs,
      allowPrivateTargets: webhooks.allowPrivateTargets,
    }),
    settings: webhooks,
    now,
    ...(features.random ? { random: features.random } : {}),
    ...(logger ? { logger } : {}),
    ...(features.webhookCounters ? { counters: features.webhookCounters } : {}),
  });
  if (senderSql === features.sql) return dispatcher;
  return {
    wake: dispatcher.wake,
    async close() {
      await dispatcher.close();
      await senderSql.close();
    },
  };
}

async function registerFeatures(
  app: FastifyInstance,
  options: AppOptions,
  features: FeaturesOptions,
  now: () => Date,
  dispatcher: Dispatcher | undefined,
): Promise<void> {
  const { sql, settings } = features;
  // One key of every instance: it seals sync tokens and keys the feeds' ETags.
  const key = await sharedKey(sql, 'sync-token', () => randomBytes(32));
  const common = { prefix: options.basePath, sql, verifier: options.verifier, now };
  await app.register(syncRoutes, {
    ...common,
    retentionSeconds: settings.syncRetentionSeconds,
    tokenKey: key,
  });
  await app.register(calendarRoutes, {
    ...common,
    settings: settings.calendar,
    etagKey: key,
    publicUrl: settings.publicUrl,
    basePath: options.basePath,
  });
  await app.register(webhookRoutes, {
    ...common,
    settings: settings.webhooks,
    wake: () => dispatcher?.wake(),
  });
  const pruner = startPruner(sql, {
    retentionSeconds: settings.syncRetentionSeconds,
    now,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  app.addHook('onClose', async () => pruner.close());
}
