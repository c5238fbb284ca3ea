import { type AuthDeps, verifiedKey } from '../auth/authenticate.js';
import { signV3 } from '../auth/signature.js';
import { ApiError } from '../errors.js';
import type { FeedError } from './errors.js';

/** The path the `auth` frame is signed with (as if it were the body-less v3 request `POST /v3/ws`). */
export const FEED_SIGNED_PATH = '/v3/ws';

export type FeedAuth =
  | {
      readonly ok: true;
      readonly accountId: number;
      readonly keyId: number;
      /** The key's scopes (order operations need `trade` for what changes orders). */
      readonly scopes: readonly string[];
    }
  | { readonly ok: false; readonly error: FeedError };

/**
 * Verifies an `auth` frame with the v3 signing scheme: signature = hex(HMAC-SHA384(secret,
 * "/v3/ws" + nonce + "{}")). The nonce follows the REST rules (Unix ms within NONCE_WINDOW_MS of
 * server time, greater than the last v3 nonce of the key, then recorded), so a captured frame cannot
 * be replayed; the key needs the `read` scope.
 */
export async function authenticateFrame(
  deps: AuthDeps,
  frame: { readonly key: string; readonly nonce: string; readonly signature: string },
): Promise<FeedAuth> {
  try {
    const key = await verifiedKey(
      deps,
      'v3',
      frame.key,
      frame.nonce,
      (secret) => signV3(secret, FEED_SIGNED_PATH, frame.nonce, ''),
      frame.signature,
    );
    if (!key.scopes.includes('read'))
      return { ok: false, error: { name: 'scope_missing', message: 'this API key lacks the "read" scope' } };
    return { ok: true, accountId: key.accountId, keyId: key.id, scopes: key.scopes };
  } catch (error) {
    // verifiedKey refuses with ApiErrors (the REST transport's values); anything else is a real failure.
    if (error instanceof ApiError)
      return { ok: false, error: { name: error.errorName, message: error.message } };
    throw error;
  }
}
