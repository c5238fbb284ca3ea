import type { FastifyRequest, onSendHookHandler, preValidationHookHandler } from 'fastify';
import { consumeNonce, findApiKey, type NonceOutcome, type Protocol, type Scope } from '../apikeys/store.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Sql } from '../db/database.js';
import { ApiError, errorBody } from '../errors.js';
import type { DeferredNonce } from '../http/request-context.js';
import type { ApiKeyCache, KnownKey } from './key-cache.js';
import { checkNonce, signatureMatches, signV2, signV3 } from './signature.js';

export interface AuthDeps {
  readonly db: Sql;
  readonly secretBox: SecretBox;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  readonly nonceWindowMs: number;
  /** Decrypted keys of recent requests (see key-cache.ts); without it every request looks its key up. */
  readonly keys?: ApiKeyCache;
}

const V3_HEADERS = ['svc-nonce', 'svc-apikey', 'svc-signature'] as const;

/** Node folds repeated headers into one string; a credential header sent twice is refused outright. */
function refuseDuplicateHeaders(request: FastifyRequest): void {
  const raw = request.raw.rawHeaders;
  for (const name of V3_HEADERS) {
    let count = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) count += 1;
    if (count > 1) throw new ApiError('duplicate_header', `header ${name} was sent ${count} times`);
  }
}

/**
 * The key a request names, with its decrypted secret: from the cache, or looked up and decrypted.
 * A key found disabled or revoked by the lookup is refused here; a cached key's status is checked
 * when the request's nonce is recorded.
 */
async function knownKey(
  deps: AuthDeps,
  publicKey: string,
): Promise<{ key: KnownKey; refused?: 'disabled' | 'revoked' }> {
  const cached = deps.keys?.get(publicKey);
  if (cached) return { key: cached };
  const key = await findApiKey(deps.db, publicKey);
  if (!key) throw new ApiError('unknown_key', 'unknown API key');
  let secret: string;
  try {
    secret = deps.secretBox.open(key.secretBox, key.publicKey);
  } catch {
    // The master key changed or the row was tampered with: the key cannot be verified.
    throw new ApiError(
      'key_disabled',
      'this API key cannot be used (its secret is unreadable); issue a new one',
    );
  }
  const known: KnownKey = {
    id: key.id,
    accountId: key.accountId,
    publicKey: key.publicKey,
    secret,
    scopes: key.scopes,
  };
  // A disabled key is refused after the signature check, so that only its owner learns its status.
  if (!key.enabled) return { key: known, refused: key.revoked ? 'revoked' : 'disabled' };
  deps.keys?.remember(known);
  return { key: known };
}

/** The refusal of a request whose nonce could not be recorded. */
export function nonceRefusal(outcome: Exclude<NonceOutcome, 'recorded'>, protocol: Protocol): ApiError {
  switch (outcome) {
    case 'disabled':
      return new ApiError('key_disabled', 'API key is disabled');
    case 'revoked':
      return new ApiError('key_disabled', 'API key is revoked');
    case 'unknown':
      return new ApiError('unknown_key', 'unknown API key');
    case 'reused':
      return new ApiError(
        'nonce_reused',
        `${protocol === 'v2' ? 'tonce' : 'svc-nonce'} must be greater than the previous one used with this key`,
      );
  }
}

/**
 * Verifies a signature made with a key's secret and records the nonce (unless deferred); refuses with
 * ApiErrors. Shared by the REST hooks below and the live feed's `auth` frame (src/feed/auth.ts).
 */
export async function verifiedKey(
  deps: AuthDeps,
  protocol: Protocol,
  publicKey: string,
  nonce: string,
  expected: (secret: string) => string,
  presented: string,
  defer?: (nonce: DeferredNonce) => void,
): Promise<KnownKey> {
  const { key, refused } = await knownKey(deps, publicKey);
  if (!signatureMatches(expected(key.secret), presented)) {
    throw new ApiError('bad_signature', 'signature does not match the request');
  }
  if (refused) throw nonceRefusal(refused, protocol);
  const nonceName = protocol === 'v2' ? 'tonce' : 'svc-nonce';
  const check = checkNonce(nonce, deps.now(), deps.nonceWindowMs);
  if (check === 'malformed')
    throw new ApiError('nonce_out_of_window', `${nonceName} must be Unix time in ms`);
  if (check === 'out_of_window') {
    throw new ApiError(
      'nonce_out_of_window',
      `${nonceName} must be within ${deps.nonceWindowMs} ms of server time (GET /v3/timestamp)`,
    );
  }
  if (defer) {
    defer({ keyId: key.id, protocol, value: Number(nonce), consumed: false });
    return key;
  }
  const outcome = await consumeNonce(deps.db, key.id, protocol, Number(nonce));
  if (outcome !== 'recorded') throw nonceRefusal(outcome, protocol);
  return key;
}

/** A route's scope, or the scopes of which it needs one (`['withdraw', 'withdraw_allowlisted']`). */
export type RouteScope = Scope | readonly Scope[];

function requireScope(key: KnownKey, scope: RouteScope): void {
  const anyOf: readonly Scope[] = typeof scope === 'string' ? [scope] : scope;
  if (!anyOf.some((one) => key.scopes.includes(one))) {
    const names = anyOf.map((one) => `"${one}"`).join(' or ');
    throw new ApiError('scope_missing', `this API key lacks the ${names} scope`);
  }
}

export interface AuthOptions {
  /**
   * Leave the recording of the nonce to the handler (`request.deferredNonce`): the order routes
   * record it in the order's own transaction. Such routes must also run `recordDeferredNonce` on
   * send, which records it when the handler did not (any refusal after the signature check).
   */
  readonly deferNonce?: boolean;
}

function deferTo(
  request: FastifyRequest,
  options: AuthOptions,
): ((nonce: DeferredNonce) => void) | undefined {
  if (!options.deferNonce) return undefined;
  return (nonce) => {
    request.deferredNonce = nonce;
  };
}

/**
 * onSend hook of routes authenticated with `deferNonce`: a correctly signed request answered without
 * its nonce recorded (refused for its scope, its body or by the order service) records it now, so
 * that it cannot be replayed.
 */
export function recordDeferredNonce(deps: AuthDeps): onSendHookHandler {
  return async (request, reply, payload) => {
    const nonce = request.deferredNonce;
    if (nonce && !nonce.consumed) {
      nonce.consumed = true;
      try {
        await consumeNonce(deps.db, nonce.keyId, nonce.protocol, nonce.value);
      } catch (error) {
        // The database is out of reach (a cluster node cut off): the request was not run here;
        // 503 says so instead of Fastify's 500 for a failed hook.
        request.log.warn({ err: error }, 'could not record a nonce');
        void reply.code(503).header('retry-after', '1').type('application/json; charset=utf-8');
        return JSON.stringify(errorBody('unavailable', 'the database is out of reach; try again shortly'));
      }
    }
    return payload;
  };
}

/**
 * The hooks made by v3Auth and v2Auth: a route whose preValidation holds one is private (request
 * limits count such routes per API key, src/limits/register.ts).
 */
const signedRequestHooks = new WeakSet<preValidationHookHandler>();

/** Does this preValidation hook authenticate a signed request (v3 or v2)? */
export function isSignedRequestHook(hook: unknown): boolean {
  return typeof hook === 'function' && signedRequestHooks.has(hook as preValidationHookHandler);
}

function signedRequestHook(hook: preValidationHookHandler): preValidationHookHandler {
  signedRequestHooks.add(hook);
  return hook;
}

/**
 * v3 private methods: headers `svc-nonce`, `svc-apikey`, `svc-signature` over path + nonce + raw body.
 * Runs before body validation, so unauthenticated callers learn nothing about the method.
 */
export function v3Auth(
  deps: AuthDeps,
  scope: RouteScope,
  options: AuthOptions = {},
): preValidationHookHandler {
  return signedRequestHook(async (request) => {
    refuseDuplicateHeaders(request);
    const headers = request.headers;
    for (const name of V3_HEADERS) {
      const value = headers[name];
      if (typeof value !== 'string' || value === '') {
        throw new ApiError('missing_credentials', `header ${name} is required`);
      }
    }
    const nonce = headers['svc-nonce'] as string;
    // The v3 signature covers the path without a query string: a request carrying one (even a bare
    // `?`) would be read with parameters nobody signed, so it is refused. Sign what is read.
    if (request.url.includes('?')) {
      throw new ApiError(
        'bad_signature',
        'a signed v3 request has no query string: the signature does not cover one',
      );
    }
    const apiPath = request.url;
    const key = await verifiedKey(
      deps,
      'v3',
      headers['svc-apikey'] as string,
      nonce,
      (secret) => signV3(secret, apiPath, nonce, request.rawBody),
      headers['svc-signature'] as string,
      deferTo(request, options),
    );
    requireScope(key, scope);
    request.auth = { accountId: key.accountId, keyId: key.id, scopes: key.scopes };
    if (request.body === undefined || request.body === null) request.body = {};
  });
}

/** v2 (Peatio) methods: `access_key`, `tonce`, `signature` in the query (GET) or form body (POST). */
export function v2Auth(
  deps: AuthDeps,
  scope: RouteScope,
  options: AuthOptions = {},
): preValidationHookHandler {
  return signedRequestHook(async (request) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const body = (request.method === 'GET' ? {} : (request.body ?? {})) as Record<string, unknown>;
    // A parameter in both the query and the form body: one of its values would be read unsigned.
    for (const name of Object.keys(body)) {
      if (Object.hasOwn(query, name))
        throw new ApiError('validation_failed', `parameter ${name} must appear once`);
    }
    const source: Record<string, unknown> = { ...query, ...body };
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(source)) {
      if (typeof value !== 'string')
        throw new ApiError('validation_failed', `parameter ${name} must appear once`);
      params[name] = value;
    }
    for (const name of ['access_key', 'tonce', 'signature']) {
      if (!params[name]) throw new ApiError('missing_credentials', `parameter ${name} is required`);
    }
    const uri = request.url.split('?')[0] ?? request.url;
    const key = await verifiedKey(
      deps,
      'v2',
      params.access_key!,
      params.tonce!,
      (secret) => signV2(secret, request.method, uri, params),
      params.signature!,
      deferTo(request, options),
    );
    requireScope(key, scope);
    request.auth = { accountId: key.accountId, keyId: key.id, scopes: key.scopes };
  });
}
