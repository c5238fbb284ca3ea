import type { FastifyServerOptions } from 'fastify';

/**
 * Pino options of the gateway. Request lines carry the method and path only: query strings hold
 * hosted-page tokens, and bodies (card numbers, codes) are never logged at all.
 */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    serializers: {
      req: (request: { method: string; url: string; id?: string }) => ({
        method: request.method,
        path: request.url.split('?')[0],
      }),
    },
  };
}
