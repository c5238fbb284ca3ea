/**
 * Reads `Authorization: Bearer <JWT>` (RFC 6750). A missing token is allowed where the route says
 * so (GET); a token that is present but invalid is always a 401, never silently treated as anonymous.
 */
import type { FastifyRequest } from 'fastify';
import type { TokenVerifier } from '../auth/token-verifier.js';
import type { Viewer } from '../domain/access.js';
import { ApiError, MESSAGES } from '../errors.js';

const REALM = 'events';

/**
 * RFC 6750 section 3: `error_description` may hold only %x20-21 / %x23-5B / %x5D-7E, so `"` and
 * `\` cannot even be escaped there; they become `'` and `/`, anything else outside the set is dropped.
 */
export function challengeText(text: string): string {
  return text
    .replaceAll('"', "'")
    .replaceAll('\\', '/')
    .replace(/[^\x20-\x7e]/g, '')
    .slice(0, 200);
}

function unauthorized(message: string, invalidToken: boolean): ApiError {
  // RFC 6750 section 3: no error code when the request simply lacked credentials.
  const challenge = invalidToken
    ? `Bearer realm="${REALM}", error="invalid_token", error_description="${challengeText(message)}"`
    : `Bearer realm="${REALM}"`;
  return new ApiError('UNAUTHENTICATED', message, { 'www-authenticate': challenge });
}

export async function viewerOf(request: FastifyRequest, verifier: TokenVerifier): Promise<Viewer | null> {
  const header = request.headers.authorization;
  if (header === undefined || header.trim() === '') return null;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
  if (match === null) throw unauthorized('Authorization must be "Bearer <JWT>"', true);
  const result = await verifier.verify(match[1]!);
  if (!result.ok) throw unauthorized(result.reason, true);
  return result.viewer;
}

export async function requireViewer(request: FastifyRequest, verifier: TokenVerifier): Promise<Viewer> {
  const viewer = await viewerOf(request, verifier);
  if (viewer === null) throw unauthorized(MESSAGES.missingToken, false);
  return viewer;
}
