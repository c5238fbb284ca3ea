import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { MAX_PARAM_LENGTH } from './framework-errors.js';
import { schemaErrorFormatter } from './schema-errors.js';

/** What differs between the services' Fastify apps; everything else is the edge's. */
export interface EdgeServerSettings {
  /** The service's pino logger; none: Fastify logs nothing. */
  readonly logger?: unknown;
  /** Largest request body in bytes. @default 65536 */
  readonly bodyLimit?: number | undefined;
  /** Fastify's `frameworkErrors`: a too long path parameter (414) or a URL that does not decode (400), in the service's error shape. */
  readonly frameworkErrors: FastifyServerOptions['frameworkErrors'];
  /** Addresses whose `X-Forwarded-For` is believed. @default none */
  readonly trustedProxies?: readonly string[] | undefined;
}

/**
 * The options every service's Fastify app is made with: its logger, a 64 KiB body limit, trailing
 * slashes ignored, path parameters bounded by MAX_PARAM_LENGTH (a longer one refused by the router),
 * the framework's own refusals in the service's shape, validation failures in readable sentences
 * (`schema-errors.ts`), and proxies trusted only when listed. Spread
 * into `Fastify({...})` beside the service's own (the request log's, for one).
 */
export function edgeServerOptions(settings: EdgeServerSettings) {
  return {
    // the app's type keeps Fastify's logger interface, which a pino logger implements
    ...(settings.logger
      ? { loggerInstance: settings.logger as FastifyBaseLogger }
      : { logger: false as const }),
    bodyLimit: settings.bodyLimit ?? 65_536,
    // Duplicate query keys become arrays and are then refused by the schemas (and the exchange's v2 auth).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: settings.frameworkErrors,
    // a choice's failures in one line (`body/type must be one of limit, market`), not one per branch
    schemaErrorFormatter,
    ...(settings.trustedProxies?.length ? { trustProxy: [...settings.trustedProxies] } : {}),
  };
}
