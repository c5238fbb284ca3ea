/**
 * The closed set of errors this service answers with, and their HTTP statuses. Every error body has
 * the NestJS shape `{statusCode, message, error}`; `message` is an array for validation failures.
 */

export type ErrorCode =
  | 'VALIDATION'
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'GONE'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL';

export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
}

/** Status and reason phrase of each code; one exhaustive switch, so a new code cannot be forgotten. */
export function statusOf(code: ErrorCode): { statusCode: number; error: string } {
  switch (code) {
    case 'VALIDATION':
    case 'BAD_REQUEST':
      return { statusCode: 400, error: 'Bad Request' };
    case 'UNAUTHENTICATED':
      return { statusCode: 401, error: 'Unauthorized' };
    case 'FORBIDDEN':
      return { statusCode: 403, error: 'Forbidden' };
    case 'NOT_FOUND':
      return { statusCode: 404, error: 'Not Found' };
    case 'METHOD_NOT_ALLOWED':
      return { statusCode: 405, error: 'Method Not Allowed' };
    case 'CONFLICT':
      return { statusCode: 409, error: 'Conflict' };
    case 'GONE':
      return { statusCode: 410, error: 'Gone' };
    case 'PRECONDITION_FAILED':
      return { statusCode: 412, error: 'Precondition Failed' };
    case 'PAYLOAD_TOO_LARGE':
      return { statusCode: 413, error: 'Payload Too Large' };
    case 'URI_TOO_LONG':
      return { statusCode: 414, error: 'URI Too Long' };
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { statusCode: 415, error: 'Unsupported Media Type' };
    case 'SERVICE_UNAVAILABLE':
      return { statusCode: 503, error: 'Service Unavailable' };
    case 'INTERNAL':
      return { statusCode: 500, error: 'Internal Server Error' };
  }
}

/** An expected failure leaving a route; the error handler turns it into the body above. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly messages: string | string[];
  /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string | string[], headers: Record<string, string> = {}) {
    // An expected failure needs no stack: capturing one was about 1% of the service's CPU on the
    // read mix, where one GET in ten is a 404 (PRIVATE events).
    const stackFrames = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(Array.isArray(message) ? message.join('; ') : message);
    Error.stackTraceLimit = stackFrames;
    this.name = 'ApiError';
    this.code = code;
    this.messages = message;
    this.headers = headers;
  }
}

export function bodyOf(code: ErrorCode, message: string | string[]): ErrorBody {
  const { statusCode, error } = statusOf(code);
  return { statusCode, message, error };
}

/** The messages used for the spec's named failures, in one place. */
export const MESSAGES = {
  eventNotFound: 'Event not found',
  notCreator: 'Only the creator of this event may change or delete it',
  missingToken: 'Missing bearer token: send Authorization: Bearer <JWT>',
  preconditionFailed: 'The event has changed: its ETag does not match If-Match (or matches If-None-Match)',
  internal: 'Internal server error',
} as const;
