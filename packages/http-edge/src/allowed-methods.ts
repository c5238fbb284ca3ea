import type { FastifyInstance } from 'fastify';

/** Methods a route can be registered for; OPTIONS is left out (CORS answers it on every path). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The methods the routes of `app` answer at the concrete path of `url` (query ignored), for a
 * not-found handler to tell "no such path" (404) from "this path, another method" (405 with
 * `allow`, RFC 9110 section 15.5.6). Uses Fastify's own router (`findRoute` matches a concrete path),
 * so parameters and prefixes count as they do for real requests. Empty when the path is unknown.
 */
export function allowedMethods(app: FastifyInstance, url: string): string[] {
  const path = url.split('?')[0] ?? '';
  return METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}

/** The `allow` header value of a 405. */
export function allowHeader(methods: readonly string[]): string {
  return methods.join(', ');
}
