/**
 * CORS for browser clients (Fetch standard, "CORS protocol"). `CORS_ORIGIN` is `*` or a list of
 * origins, as the GraphQL proxy has. Headers go on every answer to an allowed origin, errors
 * included (a browser hides an error body without them), and the headers a client pages and
 * revalidates with are exposed. Preflights are answered with 204 by an `OPTIONS *` route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const EXPOSED = 'X-Total-Count, Link, ETag, Location, X-Request-Id, WWW-Authenticate';
// POST: webhook subscriptions and calendar feeds (issue 45).
const METHODS = 'GET, HEAD, PUT, POST, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id';
/** Browsers cap this (Chromium at 2 h); 10 minutes keeps setting changes quick to take effect. */
const MAX_AGE_SECONDS = '600';

/** The `Access-Control-*` headers for a request from `origin`, or none when it is not allowed. */
export function corsHeaders(
  allowed: '*' | readonly string[],
  origin: string | undefined,
): Record<string, string> {
  if (origin === undefined) return {};
  if (allowed === '*')
    return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED };
  if (!allowed.includes(origin)) return { vary: 'Origin' };
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': EXPOSED,
    vary: 'Origin',
  };
}

export function installCors(app: FastifyInstance, allowed: '*' | readonly string[]): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const origin = request.headers.origin;
    if (origin !== undefined) reply.headers(corsHeaders(allowed, origin));
    done();
  });
  app.options('*', { schema: { hide: true } }, async (request, reply) => {
    const headers = corsHeaders(allowed, request.headers.origin);
    if (headers['access-control-allow-origin'] !== undefined) {
      reply.headers({
        'access-control-allow-methods': METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': MAX_AGE_SECONDS,
      });
    }
    return reply.code(204).send();
  });
}
