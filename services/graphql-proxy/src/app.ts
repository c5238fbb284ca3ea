import { createServer } from 'node:http';
import cors from '@fastify/cors';
import { allowedMethods, allowHeader } from '@platform/http-edge/allowed-methods';
import { renderLandingPage } from '@platform/http-edge/landing-page';
import { logNodeRequest, requestLogOptions } from '@platform/logging/request-log';
import { registerHealthRoutes } from '@platform/observability/health';
import { createRouteMetrics, registerRouteMetrics } from '@platform/observability/route-metrics';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AnswerCache } from './cache/answer-cache.js';
import { ResponseCache } from './cache/response-cache.js';
import { ScopeResolver } from './cache/scope.js';
import { FileCacheStore } from './cache/store.js';
import type { ProxyConfig } from './config.js';
import { HttpError, type HttpErrorCode, httpStatus } from './errors.js';
import { openFleet } from './fleet/open.js';
import { fleetView, startHeartbeat } from './fleet/view.js';
import { DocumentAnalyser } from './graphql/document.js';
import { PersistedQueries } from './graphql/persisted.js';
import { QueryGuard } from './limits/query-guard.js';
import { LocalAnswers } from './local/local-answer.js';
import { LocalDb } from './local/local-db.js';
import { fetchCollections, type SyncResult } from './local/sync.js';
import { ProxyMetrics } from './metrics.js';
import { FleetReplayer } from './proxy/fleet-replayer.js';
import { GraphQLHandler, mutationTags } from './proxy/graphql-handler.js';
import { Replayer } from './proxy/replayer.js';
import { LocalQueueAccess, type QueueAccess } from './queue/access.js';
import { QueueEventHub } from './queue/events.js';
import { MutationQueue } from './queue/mutation-queue.js';
import { FileOutcomeLog } from './queue/outcomes.js';
import { RedisQueue } from './queue/redis-queue.js';
import type { QueuedMutation, QueuedPayload } from './queue/store.js';
import { FileQueueStore, MemoryQueueStore } from './queue/store.js';
import { cacheRoutes } from './routes/cache.js';
import { createGraphQLListener, isGraphQLRequest } from './routes/graphql.js';
import { healthRoutes } from './routes/health.js';
import { localRoutes } from './routes/local.js';
import { isManagementRoute, managementRoutes } from './routes/management-guard.js';
import { queueRoutes } from './routes/queue.js';
import { queueEventRoutes } from './routes/queue-events.js';
import {
  createUpstreamClient,
  guardedPost,
  type UpstreamClient,
  UpstreamMonitor,
} from './upstream/client.js';

/** A route as registered: its method and pattern (the route table, e.g. for tests of every route). */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

export interface ProxyApp {
  readonly fastify: FastifyInstance;
  /** Every route registered on `fastify` (complete once it is ready: after listen or inject). */
  readonly routes: readonly RegisteredRoute[];
  readonly replayer: Replayer | FleetReplayer;
  /** The proxy's metrics; server.ts adds the process metrics and serves it on the metrics listener. */
  readonly metrics: Registry;
  /** Starts the background work (probe timer, first sync, replay of a queue left from a previous run). */
  startBackground(): void;
  close(): Promise<void>;
}

/** Fastify's `maxParamLength`: a longer path parameter (a queue id) is refused by the router. */
const MAX_PARAM_LENGTH = 500;

function fastifyErrorCode(error: FastifyError): HttpErrorCode {
  if (error.statusCode === 413) return 'PAYLOAD_TOO_LARGE';
  if (error.statusCode === 414) return 'URI_TOO_LONG';
  if (error.statusCode === 415) return 'UNSUPPORTED_MEDIA_TYPE';
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return 'BAD_REQUEST';
  return 'INTERNAL_ERROR';
}

/** The management routes' one error answer: `{statusCode, message, error}`, no internals in a 500. */
function sendHttpError(error: FastifyError | HttpError, request: FastifyRequest, reply: FastifyReply): void {
  const code = error instanceof HttpError ? error.code : fastifyErrorCode(error);
  if (code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'request failed');
  const { statusCode, error: label } = httpStatus(code);
  const message =
    code === 'INTERNAL_ERROR'
      ? 'Internal Server Error'
      : code === 'URI_TOO_LONG'
        ? `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`
        : 'code' in error && error.code === 'FST_ERR_BAD_URL'
          ? 'The URL is not valid (bad percent-encoding)'
          : error.message;
  void reply.status(statusCode).send({ statusCode, message, error: label });
}

/** Wires the proxy by hand from a config. Opens the cache, queue and local db; does not listen. */
export async function buildApp(
  config: ProxyConfig,
  logger: Logger,
  clock: () => number = Date.now,
): Promise<ProxyApp> {
  const fleet = openFleet(config, logger, clock);
  const cache: AnswerCache =
    fleet?.cache ??
    (await ResponseCache.open(
      await FileCacheStore.open(config.cacheDir),
      {
        maxEntries: config.cacheMaxEntries,
        maxBytes: config.cacheMaxBytes,
        memoryBytes: config.cacheMemoryBytes,
      },
      logger,
    ));
  const queue = await MutationQueue.open(
    await FileQueueStore.open(config.queueDir, (file) =>
      logger.error({ file }, 'corrupt queue record set aside'),
    ),
  );
  // Queue events for GET /queue/events: from the fleet channel, or from this instance's queue.
  const queueEvents = new QueueEventHub();
  const outcomes = queueEvents.followLocal(
    queue,
    await FileOutcomeLog.open(config.queueDir, config.queueOutcomesKept),
  );
  // QUEUE_STORE=redis: one queue for the fleet, replayed under a lease (the file queue stays unused).
  const redisQueue =
    fleet && config.fleet.queueStore === 'redis'
      ? new RedisQueue(fleet.client, config.fleet.redisKeyPrefix, fleet.instanceId, config.queueOutcomesKept)
      : undefined;
  if (redisQueue && queue.size > 0) {
    logger.warn(
      { queueDir: config.queueDir, queued: queue.size },
      'QUEUE_STORE=redis: mutations left in the file queue are not replayed',
    );
  }
  const queueAccess: QueueAccess = redisQueue ?? new LocalQueueAccess(queue, outcomes);
  // The fleet's queue as last read, for the optimistic local data (refreshed on every queue event).
  let fleetQueued: readonly QueuedMutation[] = [];
  const queuedNow = (): readonly QueuedMutation[] => (redisQueue ? fleetQueued : queue.list());
  const local = await LocalDb.open(config.localDbPath, logger);
  const metrics = new ProxyMetrics();
  // Per-request metrics unless METRICS_PORT=off (no listener: nothing recorded per request).
  const routeMetrics = config.metrics.port === 'off' ? undefined : createRouteMetrics(metrics.registry);
  const client = createUpstreamClient(config.upstreamEndpoint, config.upstreamTimeoutMs);
  // Every upstream call is timed for the latency histogram.
  const upstream: UpstreamClient = {
    post: async (request) => {
      const started = performance.now();
      const outcome = await client.post(request);
      metrics.observeUpstream((performance.now() - started) / 1000, outcome.kind === 'unavailable');
      return outcome;
    },
    close: () => client.close(),
  };
  const monitor = new UpstreamMonitor(config.breakerFailureThreshold);
  const analyser = new DocumentAnalyser({ maxBytes: config.queryMemoBytes });
  const authorization = config.authToken ? `Bearer ${config.authToken}` : undefined;
  // Sync requests also tell the monitor whether the upstream answers.
  // Background syncs respect the circuit breaker; one asked for by an operator (POST /local/sync)
  // tries the upstream anyway, like a probe. Both tell the monitor whether the upstream answered.
  const guarded: UpstreamClient = {
    post: (request) => guardedPost(upstream, monitor, request),
    close: () => upstream.close(),
  };
  const recorded: UpstreamClient = {
    post: async (request) => {
      const outcome = await upstream.post(request);
      monitor.record(outcome);
      return outcome;
    },
    close: () => upstream.close(),
  };
  const sync = (explicit = false): Promise<SyncResult> =>
    local.sync(() => fetchCollections(explicit ? recorded : guarded, authorization), queuedNow, clock);
  // Several mutations in a row lead to one sync, a moment after the last of them.
  let syncTimer: NodeJS.Timeout | undefined;
  const syncInBackground = () => {
    if (syncTimer) clearTimeout(syncTimer);
    syncTimer = setTimeout(() => {
      syncTimer = undefined;
      void sync();
    }, 100);
    syncTimer.unref();
  };

  // A first sync that failed (upstream not up yet at start) is retried when the upstream answers.
  monitor.onOnline(() => {
    if (config.localSyncOnStart && local.lastUpdated === null) syncInBackground();
  });
  queue.onChange((change) => {
    if (change.kind === 'append') local.appendPending(change.item);
    else local.queueChanged(() => queue.list());
  });
  const fileReplayer = new Replayer({
    // With QUEUE_STORE=redis this one is never started: an empty queue keeps its onOnline hook from
    // replaying mutations left in QUEUE_DIR behind the fleet's back.
    queue: redisQueue ? await MutationQueue.open(new MemoryQueueStore()) : queue,
    outcomes,
    upstream,
    monitor,
    authToken: config.authToken,
    clock,
    retryBaseMs: config.retryBaseMs,
    retryMaxMs: config.retryMaxMs,
    probeIntervalMs: config.probeIntervalMs,
    logger,
    onConfirmed: (item, data) => {
      const analysis = analyser.analyse(item.payload.query, item.payload.operationName);
      void cache.invalidate(
        analysis.ok ? mutationTags(analysis.operation, item.payload.variables, data) : new Set(['*']),
      );
    },
    afterReplay: syncInBackground,
  });
  const fleetReplayer =
    fleet && redisQueue
      ? new FleetReplayer({
          queue: redisQueue,
          events: fleet.events,
          upstream,
          monitor,
          authToken: config.authToken,
          clock,
          retryBaseMs: config.retryBaseMs,
          retryMaxMs: config.retryMaxMs,
          probeIntervalMs: config.probeIntervalMs,
          leaseMs: config.fleet.queueLeaseMs,
          instanceId: fleet.instanceId,
          logger,
          onConfirmed: (item, data) => {
            const analysis = analyser.analyse(item.payload.query, item.payload.operationName);
            return Promise.resolve(
              cache.invalidate(
                analysis.ok ? mutationTags(analysis.operation, item.payload.variables, data) : new Set(['*']),
              ),
            );
          },
          afterReplay: syncInBackground,
        })
      : undefined;
  const replayer: Replayer | FleetReplayer = fleetReplayer ?? fileReplayer;
  let refreshing: NodeJS.Timeout | undefined;
  const refreshFleetQueue = () => {
    if (!redisQueue || refreshing) return;
    refreshing = setTimeout(() => {
      refreshing = undefined;
      redisQueue.list().then(
        (list) => {
          fleetQueued = list;
          local.queueChanged(() => fleetQueued);
        },
        () => undefined, // Redis down: the local view keeps the last known queue
      );
    }, 50);
    refreshing.unref();
  };
  if (fleet && redisQueue) queueEvents.followFleet(fleet.events);
  fleet?.events.on((message) => {
    if (message.kind === 'queue') refreshFleetQueue();
  });
  const handler = new GraphQLHandler({
    mode: config.mode,
    authToken: config.authToken,
    authTokenForQueries: config.authTokenForQueries,
    cache,
    analyser,
    upstream,
    monitor,
    queue: queueAccess,
    queueMaxItems: config.queueMaxItems,
    clock,
    cacheTtlMs: config.cacheTtlMs,
    staleIfErrorMs: config.staleIfErrorMs,
    staleWhileRevalidateMs: config.staleWhileRevalidateMs,
    scopes: new ScopeResolver({ claim: config.cacheScopeClaim, secret: config.cacheScopeJwtSecret }, clock),
    persisted: new PersistedQueries(config.persistedQueriesMaxBytes),
    guard: new QueryGuard({ limits: config.queryLimits }),
    metrics,
    typeTtlsMs: config.typeTtlsMs,
    logger,
    triggerReplay: () => void replayer.replay(false),
    afterMutation: () => {
      if (config.mode === 'SETMODE') syncInBackground();
    },
    ...(config.mode === 'CRUDMODE'
      ? {}
      : {
          localAnswer: (() => {
            const answers = new LocalAnswers(
              () => local.synced,
              () => local.lastUpdated,
            );
            return (payload: QueuedPayload) => answers.answer(payload, clock());
          })(),
        }),
  });

  const graphqlListener = createGraphQLListener({
    handler,
    bodyLimitBytes: config.bodyLimitBytes,
    corsOrigin: config.corsOrigin,
    mode: config.mode,
    metrics,
    logger,
    // POST /graphql bypasses Fastify: its answers are recorded by the listener as it writes them.
    ...(routeMetrics
      ? {
          answered: (method: string, status: number, seconds: number) =>
            routeMetrics.record(method, '/graphql', status, seconds),
        }
      : {}),
  });
  const app = Fastify({
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Router failures (a too long queue id, a URL that does not decode) in the management error shape.
    frameworkErrors: sendHttpError,
    // POST /graphql is served on plain node:http (see routes/graphql.ts); Fastify serves the rest.
    serverFactory: (fastifyHandler) =>
      createServer((request, response) => {
        if (isGraphQLRequest(request)) {
          // /graphql is logged at info (never a probe path): no per-request work when info is off.
          if (logger.isLevelEnabled('info')) logNodeRequest(logger, request, response);
          graphqlListener(request, response);
        } else fastifyHandler(request, response);
      }),
    loggerInstance: logger as FastifyBaseLogger,
    // one line per request, secrets removed from its path (@platform/logging); POST /graphql
    // bypasses Fastify and is logged by logNodeRequest above
    ...requestLogOptions(),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
  });
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  // Before any route is registered: the CORS plugin's preflight route answers errors in this shape too.
  app.setErrorHandler(sendHttpError);
  // CORS for the GraphQL endpoint and /health only: management routes are never offered to web pages.
  const corsOptions = {
    origin: config.corsOrigin === '*' ? '*' : [...config.corsOrigin],
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['content-type', 'authorization', 'idempotency-key'],
    exposedHeaders: [
      'x-cache',
      'x-cache-key',
      'x-cache-stale',
      'x-upstream-status',
      'x-queued',
      'x-mode',
      'x-mutation',
      'x-queue-id',
      'age',
      'etag',
    ],
    optionsSuccessStatus: 204,
    strictPreflight: false,
  };
  await app.register(cors, {
    delegator: (request, callback) => {
      // Decided by the route that matched (its config), never by the URL's text (issue 41).
      callback(null, isManagementRoute(request) ? { origin: false } : corsOptions);
    },
  });

  if (routeMetrics) registerRouteMetrics(app, metrics.registry, routeMetrics);

  app.setNotFoundHandler((request, reply) => {
    // A known path with another method: 405 with `allow` (RFC 9110), in the same shape.
    const allowed = allowedMethods(request.server, request.url);
    if (allowed.length > 0) {
      reply.header('allow', allowHeader(allowed));
      reply.status(405).send({
        statusCode: 405,
        message: `Method ${request.method} not allowed; allowed: ${allowHeader(allowed)}`,
        error: 'Method Not Allowed',
      });
      return;
    }
    reply.status(404).send({ statusCode: 404, message: 'Route not found', error: 'Not Found' });
  });
  // `/`: where to go next (the landing page of every service).
  app.get('/', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(
      renderLandingPage({
        title: 'graphql-proxy',
        summary:
          'A caching GraphQL proxy in front of the blog: cache, offline mode, mutation queue, local copy.',
        links: [
          { label: 'GraphQL', href: '/graphql', note: 'POST a query (answers carry x-cache)' },
          { label: 'Health', href: '/health' },
          // Metrics are served by the metrics listener (METRICS_PORT), not on this port: link there.
          ...(typeof config.metrics.port === 'number' && config.metrics.port > 0
            ? [
                {
                  label: 'Metrics',
                  href: `http://${config.metrics.host.includes(':') ? `[${config.metrics.host}]` : config.metrics.host}:${config.metrics.port}/metrics`,
                  note: 'Prometheus: cache and queue figures (the metrics listener)',
                },
              ]
            : []),
        ],
      }),
    ),
  );

  healthRoutes(app, {
    config,
    queue: queueAccess,
    local,
    monitor,
    cache,
    ...(fleet
      ? {
          fleet: () =>
            fleetView(
              fleet,
              redisQueue,
              fleetReplayer?.replaying ?? false,
              config.fleet.cacheStore,
              config.fleet.queueStore,
            ),
        }
      : {}),
  });
  // Queue, flush, local data and cache purge: guarded routes (routes/management-guard.ts).
  managementRoutes(app, config.adminToken, (scope) => {
    queueEventRoutes(scope, queueEvents);
    queueRoutes(scope, { queue: queueAccess, replayer, clock });
    localRoutes(scope, { local, sync: () => sync(true) });
    cacheRoutes(scope, { cache });
  });
  registerHealthRoutes(app, {
    // Ready while the upstream answers: with the breaker open the proxy serves only what it cached.
    upstream: async () => {
      if (monitor.breakerState === 'open') throw new Error('the upstream circuit breaker is open');
    },
  });
  metrics.watch({
    breakerOpen: () => monitor.breakerState === 'open',
    queueDepth: () => queueAccess.size(),
    oldestQueuedAgeMs: async () => {
      const { head } = await queueAccess.summary();
      return head ? Math.max(0, clock() - Date.parse(head.createdAt)) : undefined;
    },
    queueBlocked: async () => (await queueAccess.blockedBy()) !== undefined,
    cacheSizes: () => cache.sizes(),
  });

  let started = false;
  let stopHeartbeat: (() => void) | undefined;
  return {
    fastify: app,
    routes,
    metrics: metrics.registry,
    replayer,
    startBackground() {
      if (started) return;
      started = true;
      replayer.start();
      if (fleet) {
        const startedAt = new Date(clock()).toISOString();
        stopHeartbeat = startHeartbeat(fleet, () => {
          const address = app.server.address();
          return {
            id: fleet.instanceId,
            pid: process.pid,
            port: address !== null && typeof address === 'object' ? address.port : undefined,
            mode: config.mode,
            startedAt,
          };
        });
      }
      if (config.localSyncOnStart) syncInBackground();
      if (redisQueue) refreshFleetQueue();
      else if (queue.size > 0) void replayer.replay(true);
      else void local.applyQueue(queue.list());
    },
    async close() {
      replayer.stop();
      stopHeartbeat?.();
      if (syncTimer) clearTimeout(syncTimer);
      if (refreshing) clearTimeout(refreshing);
      queueEvents.close();
      await app.close();
      await replayer.idle();
      await local.flush();
      upstream.close();
      await fleet?.close();
    },
  };
}
