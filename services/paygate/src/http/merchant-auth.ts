import type { FastifyRequest } from 'fastify';
import type { Merchant } from '../catalog/catalog.js';
import { verifySignature } from '../domain/signature.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from './deps.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The merchant whose signature the request carried (merchant API only). */
    merchant?: Merchant;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? undefined : value;
}

/**
 * Verifies `x-paygate-merchant`, `x-paygate-timestamp` and `x-paygate-signature` =
 * hex(HMAC-SHA256(secret, "<timestamp>.<raw body>")) over the exact bytes received.
 */
export function merchantAuth(deps: RouteDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const id = header(request, 'x-paygate-merchant');
    const merchant = id ? deps.catalog.merchants.get(id) : undefined;
    if (!merchant) throw new ApiError('unknown_merchant', 'x-paygate-merchant names no merchant');
    // The current secret, and during a rotation's grace period the previous one (src/secrets/).
    const secrets = deps.secrets ? await deps.secrets.accepted(merchant) : [merchant.secret];
    let check: ReturnType<typeof verifySignature> = { ok: false, reason: 'mismatch' };
    for (const secret of secrets) {
      check = verifySignature({
        secret,
        timestamp: header(request, 'x-paygate-timestamp'),
        signature: header(request, 'x-paygate-signature'),
        body: request.rawBody ?? Buffer.alloc(0),
        nowMs: deps.now(),
        windowSeconds: deps.signatureWindowSeconds,
      });
      if (check.ok || check.reason !== 'mismatch') break;
    }
    if (!check.ok) {
      if (check.reason === 'stale') {
        throw new ApiError(
          'stale_timestamp',
          `x-paygate-timestamp is more than ${deps.signatureWindowSeconds} s from the gateway's clock`,
        );
      }
      throw new ApiError('bad_signature', 'x-paygate-signature does not match the body');
    }
    request.merchant = merchant;
  };
}
