import type { Scope } from '../apikeys/store.js';
// `request.rawBody` (the bytes v3 signatures are computed over) is declared by the JSON body parser.
import '@platform/http-edge/json-body';

/** Who made an authenticated request (set by the v2/v3 authentication hooks). */
export interface AuthContext {
  readonly accountId: number;
  readonly keyId: number;
  readonly scopes: readonly Scope[];
}

/**
 * A checked nonce whose recording is left to the order writer, which records it in the same
 * transaction as the order (group commit) instead of a commit of its own. `consumed` turns true once
 * that transaction committed; a request answered without it records the nonce on its way out.
 */
export interface DeferredNonce {
  readonly keyId: number;
  readonly protocol: 'v2' | 'v3';
  readonly value: number;
  consumed: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    deferredNonce?: DeferredNonce;
  }
}
