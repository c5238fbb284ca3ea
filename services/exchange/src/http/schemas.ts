import { Type } from 'typebox';

/** The one error shape of the service (see errors.ts). */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'numeric code; 2001..2009 are the Peatio v2 codes' }),
      name: Type.String({ description: 'stable machine-readable name, e.g. bad_signature' }),
      message: Type.String(),
      usable_at: Type.Optional(
        Type.String({ description: 'address_locked only: when the address becomes usable (ISO 8601)' }),
      ),
    }),
  },
  { $id: 'ErrorResponse', description: 'error' },
);

export const errorResponses = {
  '4xx': Type.Ref('ErrorResponse'),
  '5xx': Type.Ref('ErrorResponse'),
};

/** Header schema of signed v3 methods (documented; verification happens in the auth hook). */
export const V3AuthHeaders = Type.Object({
  'svc-nonce': Type.Optional(Type.String({ description: 'Unix time in ms, greater than the previous one' })),
  'svc-apikey': Type.Optional(Type.String({ description: 'public key of the API key' })),
  'svc-signature': Type.Optional(
    Type.String({ description: 'hex(HMAC-SHA384(secret, apiPath + nonce + raw body or {}))' }),
  ),
});

export const v3Security = [{ svcApiKey: [], svcNonce: [], svcSignature: [] }];

/** Query of signed v2 GET methods. */
export const V2AuthQuery = {
  access_key: Type.String({ description: 'public key of the API key' }),
  tonce: Type.String({ description: 'Unix time in ms, greater than the previous one' }),
  signature: Type.String({ description: 'hex(HMAC-SHA256(secret, VERB|URI|sorted params))' }),
};

/** Registers a route under a v2 path and its `.json` twin, as Peatio does. */
export function v2Paths(path: string): string[] {
  return [path, `${path}.json`];
}

/** Response headers of a paged list (http/paging.ts), for the OpenAPI document. */
export function PageHeaders(next: string, nextDescription: string) {
  return {
    'x-has-more': Type.String({ description: '"true" when rows beyond this page exist, else "false"' }),
    [next]: Type.Optional(Type.String({ description: nextDescription })),
  };
}
