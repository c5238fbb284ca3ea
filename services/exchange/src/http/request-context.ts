import type { Scope } from '../apikeys/store.js';

/** Who made an authenticated request (set by the v2/v3 authentication hooks). */
export interface AuthContext {
  readonly accountId: number;
  readonly keyId: number;
  readonly scopes: readonly Scope[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received: v3 signatures are computed over these bytes. */
    rawBody?: Buffer;
    auth?: AuthContext;
  }
}
