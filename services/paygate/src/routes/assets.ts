import { FAVICON_ICO } from '@platform/checkout-look/favicon';
import { escapeHtml } from '@platform/checkout-look/html';
import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';

/** `GET /assets/methods/:code.svg`: the method logos the prerequest links to, drawn here (no outside assets). */
export function assetRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/favicon.ico',
    { schema: { tags: ['public'], summary: "The gateway's icon (browsers ask for it on every page)" } },
    async (_request, reply) =>
      reply
        .header('content-type', 'image/x-icon')
        .header('cache-control', 'public, max-age=86400')
        .send(FAVICON_ICO),
  );

  app.get(
    '/assets/methods/:file',
    {
      schema: {
        tags: ['public'],
        summary: 'Logo of a payment method (SVG)',
        params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9_]+\\.svg$' }) }),
      },
    },
    async (request, reply) => {
      const method = deps.catalog.methods.get(request.params.file.slice(0, -4));
      if (!method) throw new ApiError('not_found', 'no such method');
      const initials = (method.name.en ?? method.code)
        .split(/\s+/)
        .map((word) => word[0] ?? '')
        .join('')
        .slice(0, 3)
        .toUpperCase();
      const svg =
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="40" viewBox="0 0 64 40" role="img">' +
        `<title>${escapeHtml(method.name.en ?? method.code)}</title>` +
        '<rect width="64" height="40" rx="6" fill="#1d4ed8"/>' +
        `<text x="32" y="26" font-family="sans-serif" font-size="16" font-weight="700" fill="#fff" text-anchor="middle">${escapeHtml(initials)}</text></svg>`;
      return reply
        .header('content-type', 'image/svg+xml')
        .header('cache-control', 'public, max-age=86400')
        .send(svg);
    },
  );
}
