import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../errors.js';

/**
 * The management routes (queue, flush, local data, cache purge, metrics) can show drafts (the local
 * data is fetched with AUTH_TOKEN) and change state, so they are never offered to web pages: no CORS
 * headers (see app.ts), and
 * - with ADMIN_TOKEN: `Authorization: Bearer <ADMIN_TOKEN>` is required;
 * - without it (allowed only on a loopback HOST, config.ts refuses to start otherwise): only local,
 *   non-browser callers (curl, scripts) are served. A browser marks its requests with `Origin` or
 *   `Sec-Fetch-Site` headers, which a page cannot remove, so a page cannot trigger a "simple" cross-site
 *   POST /flush; a Host that is not a loopback name is refused against DNS rebinding.
 */

const MANAGEMENT_PREFIXES = ['/queue', '/flush', '/local/', '/cache/', '/metrics'];

export function isManagementPath(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return MANAGEMENT_PREFIXES.some((prefix) => path === prefix || path.startsWith(prefix));
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

export function guardManagementRoutes(app: FastifyInstance, adminToken: string | undefined): void {
  const expected = adminToken ? `Bearer ${adminToken}` : undefined;
  app.addHook('onRequest', async (request) => {
    if (!isManagementPath(request.url)) return;
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
  });
}
