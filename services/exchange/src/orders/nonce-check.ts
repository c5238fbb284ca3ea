import type { DeferredNonce } from '../http/request-context.js';
import type { BatchWork } from './batch-work.js';
import type { OrderRefusal } from './requests.js';
import { type KeyNonces, NO_NONCE } from './store.js';

/**
 * Checks and records a request's nonce in its batch, in arrival order, as consumeNonce would have,
 * against the key as last known (`known`) and the nonces the batch already accepted; the batch's
 * write makes sure no other request recorded a nonce as large in the meantime.
 */
export function checkNonce(
  known: KeyNonces | undefined,
  nonce: DeferredNonce,
  work: BatchWork,
): OrderRefusal | undefined {
  if (!known)
    return { ok: false, code: 'NONCE_REUSED', message: 'the API key of this request no longer exists' };
  // Authentication may have used a cached key: its status read with the batch decides.
  if (known.status !== 'usable')
    return { ok: false, code: 'KEY_DISABLED', message: `API key is ${known.status}` };
  const value = BigInt(nonce.value);
  const use = work.nonces.get(nonce.keyId) ?? { v2: 0n, v3: 0n, minV2: NO_NONCE, minV3: NO_NONCE };
  const last = nonce.protocol === 'v2' ? max(known.v2, use.v2) : max(known.v3, use.v3);
  if (value <= last) {
    return {
      ok: false,
      code: 'NONCE_REUSED',
      message: `${nonce.protocol === 'v2' ? 'tonce' : 'svc-nonce'} must be greater than the previous one used with this key`,
    };
  }
  if (nonce.protocol === 'v2') {
    use.v2 = value;
    use.minV2 = min(use.minV2, value);
  } else {
    use.v3 = value;
    use.minV3 = min(use.minV3, value);
  }
  work.nonces.set(nonce.keyId, use);
  return undefined;
}

export const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
