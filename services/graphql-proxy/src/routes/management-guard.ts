import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';

/**
 * The management routes (queue, flush, local data, cache purge) can show drafts (the local data is
 * fetched with AUTH_TOKEN) and change state, so they are never offered to web pages: no CORS headers
 * (see app.ts), and
 * - with ADMIN_TOKEN: `Authorization: Bearer <ADMIN_TOKEN>` is required;
 * - without it (allowed only on a loopback HOST, config.ts refuses to start otherwise): only local,
 *   non-browser callers (curl, scripts) are served. A browser marks its requests with `Origin` or
 *   `Sec-Fetch-Site` headers, which a page cannot remove, so a page cannot trigger a "simple" cross-site
 *   POST /flush; a Host that is not a loopback name is refused against DNS rebinding.
 *
 * The guard belongs to the routes, not to the text of the URL (issue 41): the router decodes the path
 * before it matches (`/%71ueue` is `/queue`), so a check of the raw `request.url` let escaped paths
 * through. Every route registered by `managementRoutes` is in one encapsulated Fastify scope whose
 * `onRequest` hook is the guard, and carries the route config flag `management` that the CORS check
 * reads from the route that matched. Whatever spelling reaches one of these routes meets the guard;
 * a spelling the router does not match is a 404 like any unknown path.
 */

/** The route config of a management route (set on every route `managementRoutes` registers). */
interface ManagementRouteConfig {
  readonly management?: boolean;
}

/** Whether the route that matched `request` is a management route (never decided from the URL). */
export function isManagementRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as ManagementRouteConfig | undefined)?.management === true;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A request a web page made: browsers send `Origin` with every cross-origin request and every POST,
 * and `Sec-Fetch-Site` (other than `none`, a URL the user typed) to loopback origins. Node's fetch
 * and curl send neither (Node's fetch does send `Sec-Fetch-Mode`, so that one proves nothing).
 */
function fromBrowser(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  return request.headers.origin !== undefined || (site !== undefined && site !== 'none');
}

function guard(adminToken: string | undefined): (request: FastifyRequest) => Promise<void> {
  const expected = adminToken ? `Bearer ${adminToken}` : undefined;
  return async (request) => {
    if (expected !== undefined) {
      if (!sameSecret(request.headers.authorization, expected)) {
        throw new HttpError(
          'UNAUTHORIZED',
          'The management API requires Authorization: Bearer <ADMIN_TOKEN>',
        );
      }
      return;
    }
    if (fromBrowser(request) || !LOOPBACK_HOST.test(request.headers.host ?? '')) {
      throw new HttpError(
        'FORBIDDEN',
        'Without ADMIN_TOKEN the management API serves only local non-browser callers; set ADMIN_TOKEN',
      );
    }
  };
}

/**
 * Registers the management routes: `register` adds them to the scope it is given, where each is
 * flagged `management`, guarded, and given an OPTIONS route of its own pattern so that a CORS
 * preflight for it (any spelling the router matches) also reaches a management route: answered by
 * the guard, without CORS headers, instead of by the CORS plugin's catch-all preflight route.
 */
export function managementRoutes(
  app: FastifyInstance,
  adminToken: string | undefined,
  register: (scope: FastifyInstance) => void,
): void {
  void app.register(async (scope) => {
    const patterns = new Set<string>();
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, management: true };
      patterns.add(route.url);
    });
    scope.addHook('onRequest', guard(adminToken));
    register(scope);
    for (const url of [...patterns]) {
      // The not-found handler answers it: 405 with the route's `allow`, as for any other method.
      scope.options(url, (_request, reply) => reply.callNotFound());
    }
  });
}
