import type { FastifyBaseLogger } from 'fastify';
import type { RouteDeps } from '../http/deps.js';
import type { PaygateClient } from './client.js';

/** What the fiat route modules need besides the common route deps (wired in src/fiat/register.ts). */
export interface FiatDeps extends RouteDeps {
  readonly gateway: PaygateClient;
  readonly log?: FastifyBaseLogger;
}
