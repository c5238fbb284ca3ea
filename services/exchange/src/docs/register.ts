import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from '../http/typed.js';

/**
 * The OpenAPI document (`/docs/json`) and its page (`/docs`), whose "Try it out" signs v3 requests:
 * the page's Authorize takes an API key (`svcApiKey`) and its secret (`svcApiSecret`, kept in the
 * page, never sent) and `page-signer.js` adds `svc-nonce` and `svc-signature` to each signed request
 * (the rule of src/auth/signature.ts). Everything the page loads comes from this server: Swagger UI
 * from @fastify/swagger-ui, the HMAC-SHA384 from @noble/hashes (no CDN, and no WebCrypto, which a
 * browser offers only on https or loopback addresses).
 */

/** The browser script, copied next to the compiled file by the build (a non-TypeScript asset). */
const PAGE_SIGNER = readFileSync(new URL('./page-signer.js', import.meta.url), 'utf8');

/** The ES modules of @noble/hashes the signer imports (hmac, sha2 and what they import, nothing else). */
const HASH_MODULES = ['hmac.js', 'sha2.js', '_md.js', '_u64.js', 'utils.js'] as const;
const hashesDir = path.dirname(createRequire(import.meta.url).resolve('@noble/hashes/sha2.js'));

/** Where the page loads the hash modules from; page-signer.js imports `../../signer/<file>`. */
export const SIGNER_MODULES_PATH = '/docs/signer';

export async function registerApiDocs(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Exchange API',
        version: '3.0.0',
        description:
          'v3 trading and wallet API and v2 (Peatio-style) API. Every error is ' +
          '`{"error": {"code", "name", "message"}}`.\n\n' +
          '**Try it out on a signed v3 route**: Authorize with your API key (`svcApiKey`) and its ' +
          'secret (`svcApiSecret`); this page then computes `svc-nonce` and `svc-signature` for each ' +
          'request (leave those two empty). The secret stays in the page: it is never sent.',
      },
      components: {
        securitySchemes: {
          svcApiKey: { type: 'apiKey', in: 'header', name: 'svc-apikey', description: 'your API key' },
          svcNonce: {
            type: 'apiKey',
            in: 'header',
            name: 'svc-nonce',
            description: 'Unix time in ms; this page fills it in when svcApiSecret is authorized',
          },
          svcSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'svc-signature',
            description:
              'hex(HMAC-SHA384(secret, apiPath + nonce + raw body or {})), lower case; this page ' +
              'computes it when svcApiSecret is authorized',
          },
          // No route requires this scheme: it is where the page takes the secret it signs with.
          svcApiSecret: {
            type: 'apiKey',
            in: 'header',
            name: 'svc-apisecret',
            description:
              'your API secret, for this page only: it signs each v3 request here and is never sent',
          },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    theme: { js: [{ filename: 'page-signer.js', content: PAGE_SIGNER }] },
  });
  for (const file of HASH_MODULES) {
    const source = readFileSync(path.join(hashesDir, file), 'utf8');
    app.get(`${SIGNER_MODULES_PATH}/${file}`, { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'max-age=3600').send(source),
    );
  }
}
