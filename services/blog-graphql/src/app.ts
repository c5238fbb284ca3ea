import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { renderLandingPage } from '@platform/http-edge/landing-page';
import { logNodeRequest } from '@platform/logging/request-line';
import { checkReadiness } from '@platform/observability/health';
import { createRouteMetrics, UNMATCHED_ROUTE } from '@platform/observability/route-metrics';
import { createSchema, createYoga } from 'graphql-yoga';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { BlogConfig } from './config.js';
import { seedState } from './domain/seed.js';
import { type BlogContext, STORE_UNAVAILABLE_MESSAGE } from './graphql/context.js';
import { mutationResolvers } from './graphql/mutation-resolvers.js';
import { queryResolvers } from './graphql/query-resolvers.js';
import { typeDefs } from './graphql/schema.js';
import { IdempotencyGuard } from './idempotency/guard.js';
import { idempotencyResolvers, idempotencyTypeDefs } from './idempotency/lookup-schema.js';
import { useQueryLimits } from './limits/plugin.js';
import {
  isPlaygroundAsset,
  PLAYGROUND_ASSETS,
  playgroundAsset,
  renderPlaygroundPage,
} from './playground/assets.js';
import { refuseRoute } from './routes.js';
import { BlogStore } from './store/file-store.js';

export interface BlogApp {
  readonly server: Server;
  readonly store: BlogStore;
  /** Per-route request metrics; server.ts adds the process metrics and serves it on the metrics listener. */
  readonly metrics: Registry;
  close(): Promise<void>;
}

/** The route labels of the metrics: the paths this server answers, everything else one label. */
const ROUTES = new Set([
  '/graphql',
  '/health',
  '/health/live',
  '/health/ready',
  '/yoga-health',
  ...Object.values(PLAYGROUND_ASSETS),
]);

const MAX_BODY_BYTES = 1_048_576;

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: string,
  extra: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra });
  response.end(body);
}

function sendHtml(response: ServerResponse, html: string): void {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(html);
}

/** `/`: where to go next (the landing page of every service, `@platform/http-edge/landing-page`). */
function landingPage(): string {
  return renderLandingPage({
    title: 'blog-graphql',
    summary: 'A WPGraphQL-shaped blog GraphQL server (posts, pages, categories, tags, authors).',
    links: [
      { label: 'GraphQL', href: '/graphql', note: 'POST a query; GET in a browser opens the playground' },
      { label: 'Health', href: '/health' },
    ],
  });
}

/** Builds the blog server (not listening) from a config; `clock` is injectable for tests. */
export async function buildApp(
  config: BlogConfig,
  logger: Logger,
  clock: () => number = Date.now,
): Promise<BlogApp> {
  const store = await BlogStore.open(
    config.dataDir,
    config.seed ? seedState : () => ({ ...seedState(), posts: [] }),
    {
      bounds: config.idempotency,
      now: clock,
      compactBytes: config.journalCompactBytes,
      onCompactionError: (error) => logger.error({ err: error }, 'the journal could not be compacted'),
    },
  );
  if (store.recovery.tornBytes > 0) {
    logger.warn(
      { tornBytes: store.recovery.tornBytes },
      'the journal ended in a torn line (a process killed while writing it); it was cut away',
    );
  }
  const bearer = `Bearer ${config.authToken}`;
  const guard = new IdempotencyGuard(store, clock);
  const yoga = createYoga<{ idempotency?: BlogContext['idempotency'] }, BlogContext>({
    schema: createSchema({
      typeDefs: [typeDefs, idempotencyTypeDefs],
      resolvers: [queryResolvers, mutationResolvers, idempotencyResolvers],
    }),
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/yoga-health',
    landingPage: false,
    // GraphiQL with its assets from this server (src/playground/), not from a CDN
    renderGraphiQL: renderPlaygroundPage,
    // issue 28: depth, breadth, cost, tokens, JSON depth and a list-item budget per request
    plugins: [useQueryLimits({ limits: config.queryLimits, maxListItems: config.maxListItems })],
    logging: {
      debug: (...args) => logger.debug(args.map(String).join(' ')),
      info: (...args) => logger.info(args.map(String).join(' ')),
      warn: (...args) => logger.warn(args.map(String).join(' ')),
      error: (...args) => logger.error(args.map(String).join(' ')),
    },
    context: ({ request, idempotency }) => {
      const authorization = request.headers.get('authorization');
      return {
        idempotency,
        idempotencyKey: (key, request) => guard.lookup(key, authorization ?? '', request),
        store,
        authenticated: authorization === bearer,
        sentCredentials: authorization !== null,
        now: clock,
      };
    },
  });

  const handleIdempotent = async (request: IncomingMessage, response: ServerResponse, key: string) => {
    const body = await readBody(request);
    if (body === undefined) {
      sendJson(response, 413, JSON.stringify({ errors: [{ message: 'Request body too large' }] }));
      return;
    }
    const authorization = request.headers.authorization ?? '';
    const decision = await guard.decide(key, authorization, body);
    if (decision.kind === 'replay') {
      sendJson(response, 200, decision.body, { 'idempotent-replayed': 'true' });
      return;
    }
    if (decision.kind === 'lost') {
      const message = 'This request was executed but its answer was lost; it is not executed again';
      sendJson(
        response,
        409,
        JSON.stringify({ errors: [{ message, extensions: { code: 'IDEMPOTENT_ANSWER_LOST' } }] }),
      );
      return;
    }
    if (decision.kind === 'unavailable') {
      sendJson(
        response,
        503,
        JSON.stringify({
          errors: [{ message: STORE_UNAVAILABLE_MESSAGE, extensions: { code: 'STORE_UNAVAILABLE' } }],
        }),
        { 'retry-after': '1' },
      );
      return;
    }
    if (decision.kind === 'conflict') {
      const message = 'This Idempotency-Key was already used with a different request body';
      sendJson(
        response,
        422,
        JSON.stringify({ errors: [{ message, extensions: { code: 'IDEMPOTENCY_KEY_REUSED' } }] }),
      );
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const answer = await guard.run(decision.pending, async () => {
      const result = await yoga.fetch(
        `http://localhost${request.url}`,
        { method: 'POST', headers, body },
        { idempotency: decision.pending },
      );
      return { status: result.status, body: await result.text() };
    });
    sendJson(response, answer.status, answer.body);
  };

  const metrics = new Registry();
  // Per-request metrics unless METRICS_PORT=off (no listener: nothing recorded per request).
  const routeMetrics = config.metrics.port === 'off' ? undefined : createRouteMetrics(metrics);
  const server = createServer((request, response) => {
    logNodeRequest(logger, request, response);
    const path = request.url?.split('?')[0] ?? '/';
    if (routeMetrics) {
      const started = performance.now();
      response.once('finish', () => {
        const route = ROUTES.has(path) ? path : UNMATCHED_ROUTE;
        routeMetrics.record(
          request.method ?? 'GET',
          route,
          response.statusCode,
          (performance.now() - started) / 1000,
        );
      });
    }
    const refusal = refuseRoute(request.method ?? 'GET', path);
    if (refusal) {
      request.resume();
      sendJson(
        response,
        refusal.status,
        refusal.body,
        refusal.status === 405 ? { allow: refusal.allow } : {},
      );
      return;
    }
    if (path === '/') {
      sendHtml(response, landingPage());
      return;
    }
    if (path === '/health/live' && request.method === 'GET') {
      sendJson(response, 200, JSON.stringify({ status: 'ok' }));
      return;
    }
    if (path === '/health/ready' && request.method === 'GET') {
      // The content is in memory once loaded; ready while the store can be read.
      void checkReadiness({ store: async () => store.current }).then((report) =>
        sendJson(response, report.status === 'ready' ? 200 : 503, JSON.stringify(report)),
      );
      return;
    }
    if (path === '/health' && request.method === 'GET') {
      const state = store.current;
      sendJson(
        response,
        200,
        JSON.stringify({ status: 'ok', posts: state.posts.length, pages: state.pages.length }),
      );
      return;
    }
    if (isPlaygroundAsset(path)) {
      // (the route table let GET and HEAD through)
      playgroundAsset(path).then(
        (asset) => {
          response.writeHead(200, {
            'content-type': asset.contentType,
            'content-length': Buffer.byteLength(asset.body),
            'cache-control': 'public, max-age=3600',
          });
          response.end(request.method === 'HEAD' ? undefined : asset.body);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'the playground assets could not be loaded');
          sendJson(response, 500, JSON.stringify({ errors: [{ message: 'Internal error' }] }));
        },
      );
      return;
    }
    const key = request.headers['idempotency-key'];
    if (path === '/graphql' && request.method === 'POST' && typeof key === 'string' && key.length > 0) {
      handleIdempotent(request, response, key).catch((error: unknown) => {
        logger.error({ err: error }, 'idempotent request failed');
        if (!response.headersSent)
          sendJson(response, 500, JSON.stringify({ errors: [{ message: 'Internal error' }] }));
        else response.destroy();
      });
      return;
    }
    void yoga(request, response);
  });
  server.keepAliveTimeout = 65_000;

  return {
    server,
    store,
    metrics,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.close();
    },
  };
}
