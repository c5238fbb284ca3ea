/**
 * The closed set of call errors of ShouldRateLimit. Each becomes gRPC status UNKNOWN with its
 * message (as the reference) and HTTP 400 with the message as a text body on `/json`, and is counted
 * in `ratelimit.service.call.should_rate_limit.<stat>`.
 */
export type CallErrorCode =
  | 'empty_domain'
  | 'empty_descriptors'
  | 'invalid_descriptor'
  | 'no_config'
  | 'backend';

export interface CallError {
  readonly code: CallErrorCode;
  /** Safe to show to the caller (never a backend's internal message). */
  readonly message: string;
}

/** The `<err_type>` statistic a call error is counted under. */
export function errorStat(code: CallErrorCode): 'service_error' | 'redis_error' {
  switch (code) {
    case 'backend':
      return 'redis_error';
    case 'empty_domain':
    case 'empty_descriptors':
    case 'invalid_descriptor':
    case 'no_config':
      return 'service_error';
  }
}

export const BACKEND_ERROR_MESSAGE = 'rate limit cache backend error';
