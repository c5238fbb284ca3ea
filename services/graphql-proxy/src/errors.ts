/**
 * The proxy's closed set of error codes. GraphQL-level codes are answered on POST /graphql with HTTP
 * 200 and `errors[0].extensions.code` (the original's clients expect 200); HTTP-level codes are answered
 * by the management endpoints with `{statusCode, message, error}`.
 */

export type GraphQLErrorCode =
  | 'BAD_REQUEST'
  | 'GRAPHQL_PARSE_FAILED'
  | 'OPERATION_NOT_FOUND'
  | 'SUBSCRIPTIONS_NOT_SUPPORTED'
  | 'MUTATIONS_DISABLED'
  | 'OFFLINE_CACHE_MISS'
  | 'UPSTREAM_UNAVAILABLE'
  | 'INTERNAL_ERROR'
  // issue 19: the queue's head was rejected upstream; a new mutation is refused, not queued behind it
  | 'QUEUE_BLOCKED'
  // issue 19: QUEUE_MAX_ITEMS mutations are queued already
  | 'QUEUE_FULL'
  // issue 32: QUEUE_STORE=redis and Redis cannot be reached: nothing sent, nothing queued
  | 'QUEUE_UNAVAILABLE'
  // issue 19: the body is larger than BODY_LIMIT_BYTES (answered with HTTP 413)
  | 'PAYLOAD_TOO_LARGE'
  // issue 19: HTTP cache semantics
  | 'METHOD_NOT_ALLOWED'
  | 'PERSISTED_QUERY_NOT_FOUND'
  // issue 28: over a query limit (QUERY_MAX_DEPTH, ..., REQUEST_MAX_JSON_DEPTH), refused before anything else
  | 'QUERY_LIMIT_EXCEEDED'
  // issue 28: a fragment cycle or an unknown fragment, which the limits cannot measure
  | 'GRAPHQL_VALIDATION_FAILED';

export function graphqlErrorBody(
  code: GraphQLErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({ errors: [{ message, extensions: { code, ...extra } }] });
}

export type HttpErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  // issue 18: a path parameter over the router's maxParamLength (answered before any route)
  | 'URI_TOO_LONG'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UPSTREAM_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function httpStatus(code: HttpErrorCode): { statusCode: number; error: string } {
  switch (code) {
    case 'BAD_REQUEST':
      return { statusCode: 400, error: 'Bad Request' };
    case 'UNAUTHORIZED':
      return { statusCode: 401, error: 'Unauthorized' };
    case 'FORBIDDEN':
      return { statusCode: 403, error: 'Forbidden' };
    case 'NOT_FOUND':
      return { statusCode: 404, error: 'Not Found' };
    case 'CONFLICT':
      return { statusCode: 409, error: 'Conflict' };
    case 'PAYLOAD_TOO_LARGE':
      return { statusCode: 413, error: 'Payload Too Large' };
    case 'URI_TOO_LONG':
      return { statusCode: 414, error: 'URI Too Long' };
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { statusCode: 415, error: 'Unsupported Media Type' };
    case 'UPSTREAM_UNAVAILABLE':
      return { statusCode: 503, error: 'Service Unavailable' };
    case 'INTERNAL_ERROR':
      return { statusCode: 500, error: 'Internal Server Error' };
  }
}
