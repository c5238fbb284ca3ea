/**
 * Reads `Authorization: Bearer <JWT>` (RFC 6750). A missing token is allowed where the route says
 * so (GET); a token that is present but invalid is always a 401, never silently treated as anonymous.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TokenVerifier } from '../auth/token-verifier.js';
import type { Viewer } from '../domain/access.js';
import { ApiError, MESSAGES } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The caller, set by the authentication hook before the body is parsed; null when anonymous.
     * Decorated once in app.ts for every route.
     */
    viewer: Viewer | null;
  }
}

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

/**
 * `onRequest` hook of routes where a token is optional: an anonymous call (no Authorization header)
 * skips the verifier and its promise altogether; a present but invalid token is a 401.
 */
export function optionalTokenHook(verifier: TokenVerifier) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    if (request.headers.authorization === undefined) {
      done();
      return;
    }
    viewerOf(request, verifier).then((viewer) => {
      request.viewer = viewer;
      done();
    }, done);
  };
}

/** `onRequest` hook of routes that need a caller: 401 before anything else is looked at. */
export function requiredTokenHook(verifier: TokenVerifier) {
  return async (request: FastifyRequest): Promise<void> => {
    request.viewer = await requireViewer(request, verifier);
  };
}

/** The caller of a route behind `requiredTokenHook`. */
export function callerOf(request: FastifyRequest): Viewer {
  if (request.viewer === null) throw new ApiError('UNAUTHENTICATED', MESSAGES.missingToken);
  return request.viewer;
}
